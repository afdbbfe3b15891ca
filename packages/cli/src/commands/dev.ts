import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { dev } from '../actions/dev.js';
import { daemonFlags } from '../daemon-flags.js';

export default class Dev extends BaseCommand {
  // A loop prints as it goes, for as long as it runs: there is no one document to give.
  static enableJsonFlag = false;
  static summary = 'Build, deploy, and again on every save.';
  static description =
    "Builds DIR (as crab build does) and deploys it under the package's name to bermd at --url or BERM_URL; when neither is given and nothing answers at the default address, or with --embedded, it starts a bermd of its own (the bermd package's, on a free loopback port, with a temporary state directory removed when it stops) and prints where it listens. Then it watches DIR's assembly/**, package.json and README.md: once saves have been quiet for --debounce it builds again, printing the compiler's errors located in the source (nothing is deployed, what was served still is), and deploys, printing what the build changes in the served manifest (tools added, removed, changed, with their breaks) and the gate's verdict. A break of a tool or event callers used lately is refused as crab deploy refuses it, and nothing is deployed, unless --force. A save during a build queues one more build. Ctrl-C or SIGTERM stops the watch and the bermd it started, and exits 0.";
  static examples = [
    '<%= config.bin %> dev',
    '<%= config.bin %> dev weather --url http://127.0.0.1:7477',
    '<%= config.bin %> dev --embedded --debounce 500ms',
  ];

  static args = {
    dir: Args.string({ description: 'the project directory', default: '.', ignoreStdin: true }),
  };

  static flags = {
    ...daemonFlags,
    embedded: Flags.boolean({
      description: 'start a bermd of its own, whatever --url and BERM_URL say or the default address answers',
      default: false,
    }),
    force: Flags.boolean({ description: 'deploy even when a build breaks what callers used lately', default: false }),
    debounce: Flags.string({
      description: 'how long saves must be quiet before a build starts (a duration: 200ms, 1s)',
      default: '200ms',
      helpValue: 'DURATION',
    }),
  };

  async run() {
    return this.act(await this.parse(Dev), dev);
  }
}
