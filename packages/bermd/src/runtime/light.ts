/**
 * The runtime room's light door: starting its worker threads ahead, for a caller that starts them before it
 * imports the runtime (`crab run`, through `bermd/runtime/workers`). The room's own door (index.ts) opens the
 * runner, the validators and the host calls, whose loading the threads' start is meant to overlap.
 */
export { startWorkers } from './worker-script.js';
export type { StartedWorkers } from './pool.js';
