/** The codes the registry client raises; the CLI maps each to an exit status in one place (its exit-codes.ts). */
export const OCI_ERROR_CODES = [
  'bad-reference',
  'registry-unreachable',
  'registry-unauthorized',
  'registry-denied',
  'artifact-not-found',
  'registry-error',
  'digest-mismatch',
  'unknown-media-type',
  'layer-too-large',
  'registry-auth-unreadable',
  'credential-helper-failed',
] as const;

export type OciErrorCode = (typeof OCI_ERROR_CODES)[number];

/**
 * A failure of the registry client: a stable `code`, a message saying what and where and how to get past it,
 * and details for a `--json` error object. Nothing in it is a credential: messages are built from the
 * reference, the status and the registry's own words (escaped), never from what was sent.
 */
export class OciError extends Error {
  readonly code: OciErrorCode;
  readonly details: Record<string, unknown>;
  readonly status?: number;

  constructor(code: OciErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'OciError';
    this.code = code;
    this.details = details;
    if (typeof details.status === 'number') this.status = details.status;
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details };
  }
}

export function isOciError(e: unknown): e is OciError {
  return e instanceof OciError;
}

/**
 * Text from a registry (an error body, a header) as it may be shown on a terminal: control characters
 * become visible escapes, and it is cut to a line's worth, since a registry's words are not ours to trust.
 */
export function escapeText(text: string, max = 300): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
