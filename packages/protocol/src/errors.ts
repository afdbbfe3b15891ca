/**
 * Every error the control API answers with: a stable code, the HTTP status it is answered with, and the
 * body `{"error": {"code", "message", ...details}}`. bermd raises them, the client reads them, and the
 * CLI maps each code to an exit status (its table is checked against `ErrorCode` by the compiler).
 */
export const ERROR_STATUS = {
  'bad-name': 400,
  'bad-image': 400,
  'bad-request': 400,
  'bad-limit': 400,
  'bad-grant': 400,
  /** No credentials, or credentials bermd does not accept (`WWW-Authenticate` says how to get some). */
  unauthorized: 401,
  /** A principal without the scope the request needs; `scope` names it, so a client can ask for it. */
  'insufficient-scope': 403,
  'forbidden-host': 403,
  'forbidden-origin': 403,
  'not-found': 404,
  /** A rollback's target that the store does not keep: a digest it never retained, or more steps back than it holds. */
  'not-retained': 404,
  'image-too-large': 413,
  'unsupported-media-type': 415,
  'not-wasm': 422,
  'compile-error': 422,
  'abi-version': 422,
  'missing-memory': 422,
  'missing-alloc': 422,
  'missing-export': 422,
  'bad-export-signature': 422,
  'bad-import-signature': 422,
  'undeclared-import': 422,
  'unserved-syscall': 422,
  'unsupported-module': 422,
  'memory-too-large': 422,
  'bad-schema': 422,
  'bad-host-pattern': 422,
  'grant-not-declared': 422,
  'limit-above-daemon': 422,
  /** A deploy under `--require-effects` of an image that reaches outside with tools whose effect is undeclared; `tools` lists them. */
  'effect-undeclared': 422,
  /** A deploy of an image whose reconcile tool of a `retry: "reconcile"` write declares a `returns` that cannot say `{"done": boolean, "result"?}`; `tool` and `write` name them. */
  'effect-reconcile-returns': 422,
  /** An idempotency key that is not a string, is empty, or is longer than `--max-idempotency-key`. */
  'bad-idempotency-key': 400,
  /** A call with an idempotency key a call with other arguments used: nothing ran. */
  'idempotency-key-reused': 409,
  /** A call with the key of a call still running (here or on another replica), not finished within the call's time limit. */
  'in-progress': 409,
  /** A retry of a write that started and never finished, of a tool whose retry mode is `none`: it may have happened; nothing ran. */
  'outcome-unknown': 409,
  /** A replay of a write whose answer was longer than its harness's result limit: its receipt holds the outcome, not the answer. */
  'result-not-kept': 410,
  'tool-name-collision': 409,
  'breaks-callers': 409,
  /** A rollback to the image the harness serves already: nothing would change. */
  'already-serving': 409,
  'shutting-down': 503,
  /** Answered on /mcp (as JSON-RPC) to an `initialize` when every session bermd may hold is in use. */
  'session-cap': 503,
  /** Answered to `GET /events` when as many change streams as bermd holds (`--max-event-streams`) are open. */
  'event-stream-cap': 503,
  'store-unavailable': 503,
  /** The authorization server bermd verifies tokens with (`--oauth-issuer`) cannot be reached: its metadata, keys or introspection. */
  'auth-unavailable': 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, code);
}

/** The body of every error answer. */
export interface ErrorBody {
  error: { code: string; message: string } & Record<string, unknown>;
}

/** An error the control API answers with; what reads the wire (`decodeDeployQuery`) throws it too. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra members of the JSON error body (e.g. `reason`, `offset`, `problems`). */
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
  }

  /** `{"error": {"code", "message", ...details}}`; details never override the code or the message. */
  toBody(): ErrorBody {
    const { code: _code, message: _message, ...details } = this.details;
    return { error: { code: this.code, message: this.message, ...details } };
  }
}
