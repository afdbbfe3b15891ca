/**
 * `bermd/runtime/workers`: the embedded runtime's worker threads started ahead of the runtime, for a
 * command that knows at once it will run a call (`crab run`). A thread takes tens of milliseconds to start
 * and the runtime's imports and an image's admission as long again: started first, the thread boots on a
 * second core meanwhile. Hand them to `EmbeddedRuntime.open` as `workers`; it ends them when it refuses.
 */
export { startWorkers, type StartedWorkers } from '../runtime/light.js';
