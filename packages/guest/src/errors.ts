/**
 * Errors of building a harness, each with a stable code (the CLI maps codes to exit statuses):
 * `no-entry`, the directory has no assembly/index.ts; `build-error`, the compiler reported errors (the
 * diagnostics are attached); `toolchain-incomplete`, the project installs the compiler but not the rest
 * of the toolchain; `bad-package-name`, the name the image would take (package.json's) is not a harness name.
 */
export const GUEST_ERROR_CODES = ['no-entry', 'build-error', 'toolchain-incomplete', 'bad-package-name'] as const;

export type GuestErrorCode = (typeof GUEST_ERROR_CODES)[number];

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
