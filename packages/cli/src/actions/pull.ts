import { writeFile } from 'node:fs/promises';
import type { CommandContext, Parsed } from '../context.js';
import { CliError } from '../failure.js';
import { pullImage, referenceOf } from '../registry/images.js';
import { type RegistryFlagValues, registrySettings } from '../registry/settings.js';

export interface PullResult {
  reference: string;
  digest: string;
  image_digest: string;
  size: number;
  file: string;
}

export async function pull(
  { args, flags }: Parsed<{ ref: string }, RegistryFlagValues & { output?: string }>,
  ctx: CommandContext,
): Promise<PullResult> {
  const ref = await referenceOf(args.ref);
  if (ref === undefined)
    throw new CliError('bad-reference', `'${args.ref}' is not a registry reference: give oci://HOST/REPO:TAG`, { reference: args.ref });
  const pulled = await pullImage(ref, registrySettings(flags));
  const file = flags.output ?? `${ref.repository.split('/').pop()}.wasm`;
  try {
    await writeFile(file, pulled.bytes);
  } catch (e) {
    // The image reader comes with it: loaded for a failure only, as a read file needs none of it.
    const { inputError } = await import('../input.js');
    throw inputError(file, e);
  }
  if (!ctx.json) ctx.log(`${file} ← ${pulled.pinned}`);
  return {
    reference: pulled.pinned,
    digest: pulled.resolved.digest,
    image_digest: pulled.resolved.layers.wasm.digest,
    size: pulled.bytes.length,
    file,
  };
}
