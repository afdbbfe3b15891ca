import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { isBermClientError, type DeployResult } from '@berm/client';
import { BaseCommand } from '../base-command.js';
import { stdoutPaint } from '../colour.js';
import { daemonFlags } from '../daemon.js';
import { CliError } from '../failure.js';
import { gateVerdict, renderDeploy, rollbackVerb } from '@berm/format/deploy';
import { isBreaksCallers, refusalReason, renderRefusal } from '@berm/format/gate';
import { resolveDigest } from '../rollback-target.js';

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
      description: 'how many kept images back (1, the default: the one served before this one)',
      helpValue: 'N',
      min: 1,
      exclusive: ['to'],
    }),
    force: Flags.boolean({ description: 'go back even when it breaks recent callers of what the served image added', default: false }),
    'dry-run': Flags.boolean({
      description: "say what the rollback would do and the compatibility gate's verdict, or how it would be refused; nothing changes",
      default: false,
    }),
  };

  async run(): Promise<DeployResult> {
    const { args, flags } = await this.parse(Rollback);
    const client = await this.connect(flags);
    let result: DeployResult;
    try {
      const to = flags.to === undefined ? undefined : await resolveDigest(client, args.name, flags.to);
      result = await client.rollback(args.name, { to, steps: flags.steps, force: flags.force, dryRun: flags['dry-run'] });
    } catch (e) {
      // The breaks are the answer, on stdout as a refused deploy prints them; the failure line says what to do.
      // Every other refusal (not-retained, already-serving, an image bermd no longer takes) is bermd's words.
      if (isBermClientError(e) && isBreaksCallers(e.body)) {
        if (!this.jsonEnabled()) this.log(renderRefusal(e.body, await stdoutPaint()));
        throw new CliError(
          e.code,
          `cannot roll ${args.name} back: ${refusalReason(e.body)}; roll back with --force to go back anyway`,
          e.toJSON(),
        );
      }
      throw e;
    } finally {
      await client.close();
    }
    if (!this.jsonEnabled()) {
      const paint = await stdoutPaint();
      const view = renderDeploy(result, paint, new Date(), rollbackVerb);
      this.log(result.dry_run ? `${view}\n${gateVerdict(result.reported, paint)}` : view);
    }
    return result;
  }
}
