/**
 * The runtime's two kinds of failure, each with a stable string code:
 * - `RunnerError` is thrown, only by the set-up calls (`capMemory`, `setHarness`), for an image the runtime cannot take;
 * - `CallError` is never thrown: `ToolRunner.call` answers with it, because a failing tool is an answer, not a fault.
 */
import { callScope, SCOPE } from '@berm/protocol';

export type RunnerErrorCode =
  /** A memory's initial size is above the runtime's memory cap: no call could ever start. */
  | 'memory-too-large'
  /** The bytes are not a module the runtime can rewrite or run (truncated, memory64, unknown limit flags). */
  | 'bad-module'
  /** A tool's `arguments` or an event's `fields` is not a schema the validator can compile. */
  | 'bad-schema'
  /** The manifest and the module disagree, or the manifest is missing what the runtime needs. */
  | 'bad-harness'
  /** A runner option is out of range. */
  | 'bad-option'
  /** The runner was closed. */
  | 'closed';

export class RunnerError extends Error {
  readonly code: RunnerErrorCode;
  /** The tool or event a schema error concerns, or the memory index a cap error concerns. */
  readonly where?: string;

  constructor(code: RunnerErrorCode, message: string, where?: string) {
    super(message);
    this.name = 'RunnerError';
    this.code = code;
    if (where !== undefined) this.where = where;
  }

  toJSON(): { code: string; message: string; where?: string } {
    return { code: this.code, message: this.message, where: this.where };
  }
}

export function isRunnerError(e: unknown): e is RunnerError {
  return e instanceof RunnerError;
}

export type CallErrorCode =
  /** No harness of that name is deployed. */
  | 'unknown-harness'
  /** The harness has no tool of that name. */
  | 'unknown-tool'
  /** The call's caller may not call the harness it names (it holds neither `berm:call` nor `berm:call:NAME`); nothing ran. */
  | 'insufficient-scope'
  /** The arguments do not match the tool's schema; nothing ran. `path` points at the offending value. */
  | 'invalid-arguments'
  /** The guest answered `{"error": "..."}`. */
  | 'guest-error'
  /** The guest trapped (unreachable, out-of-bounds access, stack overflow, ...). */
  | 'trap'
  /** The call ran past `callTimeoutMs` (waiting for a worker included); its worker was terminated, or it never started. */
  | 'timeout'
  /** Its harness already had `maxQueue` calls waiting for a worker; it did not run. */
  | 'busy'
  /** The caller aborted the call (its `signal`); the worker was terminated if the guest was running. */
  | 'cancelled'
  /** The host could not give the guest its memory, or the worker ran out of heap. */
  | 'memory-limit'
  /** The guest's result is longer than `maxResultBytes`; it was not read. */
  | 'result-too-large'
  /** The guest's result is not a UTF-8 JSON envelope `{"ok": v}` / `{"error": "msg"}`, or lies outside its memory. */
  | 'bad-result'
  /** The envelope's `content` holds a block that is malformed or of a kind the tool does not declare. */
  | 'bad-content'
  /** The module could not be instantiated (an import the runtime does not serve, a missing export). */
  | 'bad-module'
  /** The runner was closed before the call finished. */
  | 'closed'
  /** The runtime itself failed; the message says how. */
  | 'internal';

/**
 * Why a call its caller may not make was not made: the runner's answer to a call, and (as `{"refused": ...}`)
 * a `berm.call`'s in the chain. It names the caller and the scope it lacks, never what the caller holds.
 */
export function notPermitted(caller: string, harness: string, tool: string): CallError {
  return {
    code: 'insufficient-scope',
    message: `the caller (${caller}) does not hold ${callScope(harness)} (nor ${SCOPE.call}): ${harness}.${tool} was not called`,
  };
}

export interface CallError {
  code: CallErrorCode;
  message: string;
  /** For `invalid-arguments`: a JSON pointer into the arguments. */
  path?: string;
}
