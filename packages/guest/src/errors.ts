/** Errors of building a harness, each with a stable code (the CLI maps codes to exit statuses). */
export type GuestErrorCode =
  /** The directory has no assembly/index.ts. */
  | 'no-entry'
  /** The compiler reported errors (the diagnostics are attached). */
  | 'build-error'
  /** The project installs the compiler but not the rest of the toolchain. */
  | 'toolchain-incomplete';

export class GuestError extends Error {
  readonly code: GuestErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: GuestErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'GuestError';
    this.code = code;
    this.details = details;
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details };
  }
}

export function isGuestError(e: unknown): e is GuestError {
  return e instanceof GuestError;
}
