/**
 * A project directory compiled into its image, written to DIR/build/<name>.wasm: `crab build`, and
 * `crab run` given a directory. The compiler's report goes to stderr as it gives it, unless `quiet`
 * (`--json`, where stdout is one document and the report rides in the error's details).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { printable } from '@berm/format/printable';

export interface BuiltProject {
  image: string;
  result: Awaited<ReturnType<typeof import('@berm/guest/build').build>>;
}

export async function buildProject(dir: string, options: { optimize: boolean; quiet: boolean }): Promise<BuiltProject> {
  const { build, isGuestError } = await import('@berm/guest/build');
  let result: BuiltProject['result'];
  try {
    result = await build({ dir, optimize: options.optimize });
  } catch (e) {
    // The compiler's report is the answer to read: on stderr as it gives it, before crab's one line.
    if (isGuestError(e) && typeof e.details.text === 'string' && e.details.text && !options.quiet) {
      process.stderr.write(`${printable(e.details.text)}\n\n`);
    }
    throw e;
  }
  if (result.text && !options.quiet) process.stderr.write(`${printable(result.text)}\n\n`);
  const outDir = join(dir, 'build');
  await mkdir(outDir, { recursive: true });
  const image = join(outDir, `${result.name}.wasm`);
  await writeFile(image, result.bytes);
  return { image, result };
}
