import type { ManifestData } from '@berm/manifest';
import type { CommandContext, Parsed } from '../context.js';
import { readImage } from '../input.js';
import { readImageOrReference } from '../registry/read.js';
import type { RegistryFlagValues } from '../registry/settings.js';

export interface InspectFlags extends RegistryFlagValues {
  url?: string;
  token?: string;
}

export async function inspect({ args, flags }: Parsed<{ image: string }, InspectFlags>, ctx: CommandContext): Promise<ManifestData> {
  // The registry flags' values are read only when given (a reference without them reads the defaults):
  // `inspect --json FILE`, which scripts run in loops, loads nothing a file does not need.
  const given = flags['max-image-size'] !== undefined || flags['insecure-registry'] !== undefined;
  const settings = given ? (await import('../registry/settings.js')).registrySettings(flags) : undefined;
  const manifest = await readImageOrReference(args.image, () => readImage(args.image), settings);
  if (!ctx.json) {
    // Nothing to mark, nothing to ask: a BERM_URL whose daemon is down must not fail the command.
    const deployed = manifest.data.deps.programs.length > 0 ? await deployedPrograms(flags, ctx) : undefined;
    const [{ basename }, { renderManifest }, { stdoutPaint }] = await Promise.all([
      import('node:path'),
      import('@berm/format/manifest'),
      import('../colour.js'),
    ]);
    ctx.log(renderManifest(manifest.data, { name: basename(args.image), paint: await stdoutPaint(), deployed }));
  }
  return manifest.toJSON();
}

/**
 * The names deployed on the daemon, to mark declared programs that are not; undefined when
 * no daemon address is given, and then nothing is marked. Only the human view asks: `--json`
 * is the manifest and nothing else.
 */
async function deployedPrograms(flags: { url?: string; token?: string }, ctx: CommandContext): Promise<ReadonlySet<string> | undefined> {
  if (flags.url === undefined) return undefined;
  const client = await ctx.connect(flags);
  try {
    return new Set((await client.list()).map((h) => h.name));
  } finally {
    await client.close();
  }
}
