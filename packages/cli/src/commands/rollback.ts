import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { ROLLBACK_STEPS } from '../flag-values.js';
import { daemonFlags } from '../daemon-flags.js';
import { rollback } from '../actions/rollback.js';

export default class Rollback extends BaseCommand {
  static summary = 'Go back to an image a harness served before.';
  static description =
    "Deploys again an image bermd keeps for NAME, with the limits and grants it was deployed with: one image back by default, --steps N further back, or --to DIGEST (a full digest, or its start as berm history shows it). On an undeployed name, brings back the image it served last. It is a deploy in every other way: going back removes what the newer image added, so a rollback that breaks tools or events callers used lately is refused, its breaks listed, and --force goes past it. Prints what is served now, the breaks reported, the notices and the history entry it made; --dry-run prints what would happen and the gate's verdict, with nothing changed. Exits 1 when bermd refuses (breaks-callers, not-retained, already-serving), 2 on bad input, 3 when the daemon cannot be reached.";
  static examples = [
    '<%= config.bin %> rollback weather --dry-run',
    '<%= config.bin %> rollback weather',
    '<%= config.bin %> rollback weather --steps 2',
    '<%= config.bin %> rollback weather --to 0123456789ab',
    '<%= config.bin %> rollback weather --force --json',
  ];

  static args = {
    name: Args.string({ description: 'the harness to roll back, deployed or undeployed', required: true }),
  };

  static flags = {
    ...daemonFlags,
    to: Flags.string({
      description: 'the kept image to go back to: its digest, or the start of it as berm history shows it',
      helpValue: 'DIGEST',
      exclusive: ['steps'],
    }),
    steps: Flags.integer({
      ...ROLLBACK_STEPS,
      description: 'how many kept images back (1, the default: the one served before this one)',
      helpValue: 'N',
      exclusive: ['to'],
    }),
    force: Flags.boolean({ description: 'go back even when it breaks recent callers of what the served image added', default: false }),
    'dry-run': Flags.boolean({
      description: "say what the rollback would do and the compatibility gate's verdict, or how it would be refused; nothing changes",
      default: false,
    }),
  };

  async run() {
    return this.act(await this.parse(Rollback), rollback);
  }
}
