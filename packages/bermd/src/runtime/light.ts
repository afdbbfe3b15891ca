/**
 * The runtime room's light door: starting its worker threads ahead, for a caller that starts them before it
 * imports the runtime (`crab run`, through `bermd/runtime/workers`), and whether a bundle the build made is
 * fresh (the embedded runtime's entry asks). The room's own door (index.ts) opens the runner, the
 * validators and the host calls, whose loading the threads' start is meant to overlap.
 */
export { startWorkers } from './worker-script.js';
export { bundleIsFresh } from './bundles.js';
export { requireBundle } from './code-cache.js';
export type { StartedWorkers } from './pool.js';
