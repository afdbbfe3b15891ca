/**
 * `bermd/runtime` as a command loads it: the embedded runtime's door (index.ts) from the one module the
 * build bundles it into (dist/runtime/embedded-bundle.js, scripts/bundle.js), since loading the hundred
 * modules it is compiled to, each resolved and read on its own, cost `crab run` more than anything else
 * it does before its call. The same code: the bundle is those modules put together. When the bundle is
 * missing or older than a compile, the modules themselves (bundles.ts).
 */
import { bundleIsFresh } from '../runtime/light.js';

const bundle = new URL('../runtime/embedded-bundle.js', import.meta.url);

type Door = typeof import('./index.js');
const door = (await import(bundleIsFresh(bundle) ? bundle.href : './index.js')) as Door;

export const { EmbeddedRuntime, CallRefused, load, Secrets, SecretsFileError, BermdError, isBermdError, DEFAULT_LIMITS, startWorkers } =
  door;
export type * from './index.js';
