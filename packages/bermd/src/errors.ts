/**
 * Every error bermd answers with, each with a stable string code and the HTTP status it maps to.
 * The core raises these; the HTTP layer only serialises them, so the core stays testable without a socket.
 */
export const ERROR_STATUS = {
  'bad-name': 400,
  'bad-image': 400,
  'bad-request': 400,
  'bad-limit': 400,
  'bad-grant': 400,
  unauthorized: 401,
  'not-found': 404,
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
  'tool-name-collision': 409,
  'breaks-callers': 409,
  'shutting-down': 503,
  internal: 500,
} as const;

export type BermdErrorCode = keyof typeof ERROR_STATUS;

export class BermdError extends Error {
  readonly code: BermdErrorCode;
  readonly status: number;
  /** Extra members of the JSON error body (e.g. `reason`, `offset`, `problems`). */
  readonly details: Record<string, unknown>;

  constructor(code: BermdErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'BermdError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
  }

  /** The body the control API answers with: `{"error": {"code", "message", ...details}}`. */
  toBody(): { error: { code: string; message: string } & Record<string, unknown> } {
    const { code: _code, message: _message, ...details } = this.details;
    return { error: { code: this.code, message: this.message, ...details } };
  }
}

export function isBermdError(e: unknown): e is BermdError {
  return e instanceof BermdError;
}
