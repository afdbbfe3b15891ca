import type { ManifestData } from '@berm/manifest';
import { printable } from '@berm/format/printable';
import type { CommandContext, Parsed } from '../context.js';
import { buildProject } from '../project-build.js';

export interface BuildCommandResult {
  image: string;
  manifest: ManifestData;
}

export async function build(
  { args, flags }: Parsed<{ dir: string }, { optimize: boolean }>,
  ctx: CommandContext,
): Promise<BuildCommandResult> {
  const { image, result } = await buildProject(args.dir, { optimize: flags.optimize, quiet: ctx.json });
  if (!ctx.json) {
    const { tools, events } = result.manifest;
    const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
    const from = result.toolchain.source === 'project' ? ", the project's toolchain" : '';
    // The version is package.json's, the toolchain's versions those of the project's node_modules.
    ctx.log(printable(image));
    ctx.log(
      printable(
        `built ${result.name}${result.manifest.version ? ` ${result.manifest.version}` : ''}: ${count(tools.length, 'tool')} (${tools.map((t) => t.name).join(', ') || 'none'}), ${count(events.length, 'event')}, ${Math.round(result.bytes.length / 1024)} KiB (assemblyscript ${result.toolchain.assemblyscript.version}, json-as ${result.toolchain.jsonAs.version}${from})`,
      ),
    );
  }
  return { image, manifest: result.manifest };
}
