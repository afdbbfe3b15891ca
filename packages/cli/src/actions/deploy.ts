import { readFile } from 'node:fs/promises';
import { isBermClientError, type DeployResult } from '@berm/client';
import { renderDeploy } from '@berm/format/deploy';
import { isBreaksCallers, refusalReason, renderRefusal } from '@berm/format/gate';
import type { DeploySource } from '@berm/protocol';
import { stdoutPaint } from '../colour.js';
import type { CommandContext, Parsed } from '../context.js';
import { CliError } from '../failure.js';
import { limitOptions } from '../limit-values.js';
import { mayBeReference } from '../registry/read.js';
import { type RegistryFlagValues, registrySettings } from '../registry/settings.js';

export interface DeployFlags extends RegistryFlagValues {
  url?: string;
  token?: string;
  force: boolean;
  'dry-run': boolean;
  grant?: string[];
  'require-digest': boolean;
  /** The per-harness limits (limit-values.ts), by their settings' flag names. */
  [limit: string]: unknown;
}

export async function deploy(
  { args, flags }: Parsed<{ name: string; image: string }, DeployFlags>,
  ctx: CommandContext,
): Promise<DeployResult> {
  let bytes: Uint8Array | undefined;
  let source: DeploySource | undefined;
  if (mayBeReference(args.image)) {
    const { referenceOf, pullImage } = await import('../registry/images.js');
    const ref = await referenceOf(args.image);
    if (ref !== undefined) {
      if (flags['require-digest'] && ref.digest === undefined) {
        throw new CliError(
          'digest-required',
          `'${args.image}' names a tag, and --require-digest asks for a digest: deploy ${args.image.replace(/:[^:/]*$/, '')}@sha256:…`,
          {
            image: args.image,
          },
        );
      }
      // The image is read by the digest the reference resolved to, and its bytes checked against it.
      const pulled = await pullImage(ref, registrySettings(flags));
      bytes = pulled.bytes;
      const { formatReference } = await import('@berm/oci');
      source = { reference: formatReference(ref), digest: pulled.resolved.digest };
    }
  }
  if (bytes === undefined) {
    if (flags['require-digest']) {
      throw new CliError('digest-required', `'${args.image}' is a file, and --require-digest asks for a registry reference with a digest`, {
        image: args.image,
      });
    }
    try {
      bytes = await readFile(args.image);
    } catch (e) {
      // The image reader comes with it: loaded for a failure only, as a read file needs none of it.
      const { inputError } = await import('../input.js');
      throw inputError(args.image, e);
    }
  }
  const client = await ctx.connect(flags);
  let result: DeployResult;
  try {
    result = await client.deploy(args.name, bytes, {
      force: flags.force,
      dryRun: flags['dry-run'],
      ...limitOptions(flags),
      grants: flags.grant,
      ...(source === undefined ? {} : { source }),
    });
  } catch (e) {
    // A refusal is the daemon's answer about this image: said as such, with its code and status kept.
    // bermd's 401 and 403 are about the token, not the image: they are restated for it where every command's are.
    if (isBermClientError(e) && e.status !== undefined && e.status !== 401 && e.code !== 'insufficient-scope') {
      let why = e.message;
      if (isBreaksCallers(e.body)) {
        // The breaks are the answer, on stdout as `crab breaks` prints them; the failure line says what to do.
        if (!ctx.json) ctx.log(renderRefusal(e.body, await stdoutPaint()));
        why = `${refusalReason(e.body)}; deploy with --force to replace it anyway`;
      }
      throw new CliError(e.code, `cannot deploy '${args.image}' as ${args.name}: ${why}`, { ...e.toJSON(), image: args.image });
    }
    throw e;
  } finally {
    await client.close();
  }
  if (!ctx.json) ctx.log(renderDeploy(result, await stdoutPaint()));
  return result;
}
