import * as Args from '@oclif/core/args';
import { BaseCommand } from '../base-command.js';
import { daemonFlags } from '../daemon-flags.js';
import { undeploy } from '../actions/undeploy.js';

export default class Undeploy extends BaseCommand {
  static summary = 'Remove a deployed harness.';
  static description =
    'Removes NAME from bermd: its tools leave the MCP endpoint and its image leaves the store. Exits 1 when no harness has that name.';
  static examples = ['<%= config.bin %> undeploy echo'];

  static args = {
    name: Args.string({ description: 'the harness to remove', required: true }),
  };

  static flags = { ...daemonFlags };

  async run() {
    return this.act(await this.parse(Undeploy), undeploy);
  }
}
