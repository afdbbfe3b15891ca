/**
 * `bermd/runtime` as a command loads it: the embedded runtime's door (index.ts) from the one file the
 * build bundles it into (dist/runtime/embedded-bundle.cjs, scripts/bundle.js), with that file's code cache
 * (runtime/code-cache.ts), since loading the hundred modules it is compiled to, each resolved, read and
 * compiled on its own, cost `crab run` more than anything else it does before its call. The same code:
 * the bundle is those modules put together. When the bundle is missing or older than a compile, the
 * modules themselves (runtime/bundles.ts).
 */
import { fileURLToPath } from 'node:url';
import { bundleIsFresh, requireBundle } from '../runtime/light.js';

const bundle = new URL('../runtime/embedded-bundle.cjs', import.meta.url);

type Door = typeof import('./index.js');
const door = (bundleIsFresh(bundle) ? requireBundle(fileURLToPath(bundle)) : await import('./index.js')) as Door;

export const { EmbeddedRuntime, CallRefused, load, Secrets, SecretsFileError, BermdError, isBermdError, DEFAULT_LIMITS, startWorkers } =
  door;
export type * from './index.js';
