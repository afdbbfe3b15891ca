import { describeFailure } from './failure.js';
import { readImage } from './input.js';
import { readImageOrReference } from './registry/read.js';
import { writeFailure, writeJson } from './report.js';

/**
 * `inspect --json IMAGE` without oclif: what `bin/run.js` calls for exactly that command line.
 * It does what the `inspect` command does with `--json`, through the same functions (read,
 * report, print), so the two cannot drift apart; see `bin/run.js` for why it exists.
 */
export async function inspectJson(image: string, bin: string): Promise<void> {
  try {
    writeJson((await readImageOrReference(image, () => readImage(image))).toJSON());
  } catch (e) {
    writeFailure(describeFailure(e, `${bin} inspect`), bin, true);
  }
}
