/**
 * Where the pool's worker script is, apart from the runner, so that workers can be started ahead
 * (`startWorkers`) without importing the rest of the runtime.
 *
 * The script is worker-bundle.cjs when the build has made it (scripts/bundle.js): worker.js and the
 * modules it imports as one CommonJS file, which a thread starts several times sooner than the ES modules
 * themselves (a worker whose script is CommonJS does not set up the ES module loader, and one file is read
 * where thirty were resolved and read one by one). The same code; worker.js when the bundle is missing or
 * older than a compile (bundles.ts).
 */
import { existsSync } from 'node:fs';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleIsFresh } from './bundles.js';
import { StartedWorkers } from './pool.js';

/** The built worker script's path: next to this module in `dist/`, or, when sources are run directly, in the build; undefined when neither is there. */
export function workerScriptPath(): string | undefined {
  const bundle = new URL('./worker-bundle.cjs', import.meta.url);
  if (bundleIsFresh(bundle)) return fileURLToPath(bundle);
  const here = fileURLToPath(new URL('./worker.js', import.meta.url));
  if (existsSync(here)) return here;
  const built = here.replace(/[\\/]src[\\/]runtime[\\/]worker\.js$/, `${sep}dist${sep}runtime${sep}worker.js`);
  if (built !== here && existsSync(built)) return built;
  return undefined;
}

/**
 * Starts `count` of the runtime's worker threads ahead of the runtime that will run calls on them (given
 * it as `RunnerOptions.started`, or the embedded runtime's `workers`). None are started when the worker
 * script is missing: the runner says so when it is made.
 */
export function startWorkers(count = 1): StartedWorkers {
  const script = workerScriptPath();
  return new StartedWorkers(script ?? '', script === undefined ? 0 : count);
}
