import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { newProject } from '../actions/new.js';

export default class New extends BaseCommand {
  static summary = 'Write a new harness project in AssemblyScript.';
  static description =
    'Writes DIR (default ./NAME): package.json, assembly/index.ts with one tool and one event, a test that runs the built image with Node, and a README that says how to build, deploy and call it. It builds as it is with `crab build DIR`. Refuses a directory that exists and is not empty.';
  static examples = ['<%= config.bin %> new weather', '<%= config.bin %> new weather --dir harnesses/weather'];

  static args = {
    name: Args.string({
      description: 'the harness name: lowercase letters, digits, _ and -, at most 64 (a harness and an npm package name)',
      required: true,
    }),
  };

  static flags = {
    dir: Flags.string({ description: 'where to write the project [default: ./NAME]', helpValue: 'DIR' }),
  };

  async run() {
    return this.act(await this.parse(New), newProject);
  }
}
