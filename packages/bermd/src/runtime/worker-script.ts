/**
 * Where the pool's worker script is, apart from the runner, so that workers can be started ahead
 * (`startWorkers`) without importing the rest of the runtime.
 */
import { existsSync } from 'node:fs';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StartedWorkers } from './pool.js';

/** The built worker script's path: next to this module in `dist/`, or, when sources are run directly, in the build; undefined when neither is there. */
export function workerScriptPath(): string | undefined {
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
