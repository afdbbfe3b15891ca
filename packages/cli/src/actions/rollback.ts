import { isBermClientError, type DeployResult } from '@berm/client';
import { gateVerdict, renderDeploy, rollbackVerb } from '@berm/format/deploy';
import { isBreaksCallers, refusalReason, renderRefusal } from '@berm/format/gate';
import { stdoutPaint } from '../colour.js';
import type { CommandContext, Parsed } from '../context.js';
import { CliError } from '../failure.js';
import { resolveDigest } from '../rollback-target.js';

export interface RollbackFlags {
  url?: string;
  token?: string;
  to?: string;
  steps?: number;
  force: boolean;
  'dry-run': boolean;
}

export async function rollback({ args, flags }: Parsed<{ name: string }, RollbackFlags>, ctx: CommandContext): Promise<DeployResult> {
  const client = await ctx.connect(flags);
  let result: DeployResult;
  try {
    const to = flags.to === undefined ? undefined : await resolveDigest(client, args.name, flags.to);
    result = await client.rollback(args.name, { to, steps: flags.steps, force: flags.force, dryRun: flags['dry-run'] });
  } catch (e) {
    // The breaks are the answer, on stdout as a refused deploy prints them; the failure line says what to do.
    // Every other refusal (not-retained, already-serving, an image bermd no longer takes) is bermd's words.
    if (isBermClientError(e) && isBreaksCallers(e.body)) {
      if (!ctx.json) ctx.log(renderRefusal(e.body, await stdoutPaint()));
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
  if (!ctx.json) {
    const paint = await stdoutPaint();
    const view = renderDeploy(result, paint, new Date(), rollbackVerb);
    ctx.log(result.dry_run ? `${view}\n${gateVerdict(result.reported, paint)}` : view);
  }
  return result;
}
