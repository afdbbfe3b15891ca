export {
  ToolRunner,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_CALL_DEPTH,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_MAX_QUEUE,
  type RunnerOptions,
  type CallEndListener,
} from './runner.js';
export type { AskRequest, Caller, CallAsk, CallOptions, CallOutcome, CallTrace, Reached } from './call.js';
export { askReserveMs } from './ask.js';
export { contentProblem } from './content.js';
export type { GuestReport } from './worker-messages.js';
export { PreparedHarness, type HarnessLimits, type HarnessInput } from './deployed.js';
export { capMemory, capPages, WASM_PAGE_BYTES } from './memory-cap.js';
export { RunnerError, isRunnerError, type RunnerErrorCode, type CallError, type CallErrorCode } from './errors.js';
export { SERVED_HOST_CALLS, LOG_LEVELS, HOST_CALLS, MAX_PROGRESS_REPORTS } from './host-calls.js';
export type { HostCall, HostCallContext, HostEnvelope } from './host-call.js';
export { compileValidators, schemaProblem, type HarnessValidators } from './validators.js';
export { ajv2020 } from './ajv.js';
export { describeIssue, violation, type Check, type SchemaIssue } from './schema-issues.js';
export { ASYNC_HOST_CALLS, ASK_HOST_CALLS, type HostService, type HostServiceCall, type HostTrace } from './http-fetch.js';
export { isPlainObject } from './guest-memory.js';
export { Stop, type SignalLike } from './stop.js';
export { startWorkers } from './worker-script.js';
export type { StartedWorkers } from './pool.js';
export { nestedKey } from './idempotency-key.js';
