import { readFile } from 'node:fs/promises';
import { Manifest } from '@berm/manifest';
import { buildArtifact, formatReference, pushArtifact, type PushReport } from '@berm/oci';
import type { CommandContext, Parsed } from '../context.js';
import { CliError } from '../failure.js';
import { inputError } from '../input.js';
import { openRegistry, pullImage, referenceOf } from '../registry/images.js';
import { type RegistryFlagValues, registrySettings } from '../registry/settings.js';

export interface PushResult extends PushReport {
  reference: string;
}

export async function push(
  { args, flags }: Parsed<{ image: string; ref: string }, RegistryFlagValues & { source?: string }>,
  ctx: CommandContext,
): Promise<PushResult> {
  const settings = registrySettings(flags);
  const target = await referenceOf(args.ref);
  if (target === undefined || target.tag === undefined) {
    throw new CliError('bad-reference', `'${args.ref}' is not a reference to push to: give oci://HOST/REPO:TAG`, { reference: args.ref });
  }
  const from = await referenceOf(args.image);
  let bytes: Uint8Array;
  if (from !== undefined) {
    bytes = (await pullImage(from, settings)).bytes;
  } else {
    try {
      bytes = await readFile(args.image);
    } catch (e) {
      throw inputError(args.image, e);
    }
  }
  let manifest: Manifest;
  try {
    manifest = Manifest.fromImage(bytes);
  } catch (e) {
    throw inputError(args.image, e);
  }
  // SOURCE_DATE_EPOCH, as reproducible builds set it, makes the same image push as the same digest.
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  const created = new Date(Number.isFinite(epoch) && process.env.SOURCE_DATE_EPOCH !== '' ? epoch * 1000 : Date.now())
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z');
  const artifact = buildArtifact({
    image: bytes,
    manifestJson: JSON.stringify(manifest.toJSON()),
    version: manifest.data.version,
    tools: manifest.data.tools.map((t) => t.name),
    ...(flags.source === undefined ? {} : { source: flags.source }),
    created,
  });
  const registry = openRegistry(target, settings);
  let report: PushReport;
  try {
    const mountFrom = from !== undefined && from.host === target.host ? from.repository : undefined;
    report = await pushArtifact(registry, target, artifact, mountFrom === undefined ? {} : { mountFrom });
  } finally {
    await registry.close();
  }
  const reference = formatReference(target, report.digest);
  if (!ctx.json) ctx.log(report.digest);
  return { reference, ...report };
}
