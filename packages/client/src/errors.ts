/** The codes the client raises itself; every other code is the daemon's. */
export const CLIENT_ERROR_CODES = ['bad-url', 'bad-name', 'daemon-unreachable', 'connection-lost', 'unexpected-response'] as const;

export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

/** An answer from bermd that is not the one asked for, or no answer at all. Callers branch on `code`. */
export class BermClientError extends Error {
  /** The daemon's stable error code, or one of the client's own (`CLIENT_ERROR_CODES`). */
  readonly code: string;
  /** The HTTP status, when the daemon answered. */
  readonly status?: number;
  /** The daemon's error object (`{code, message, ...}`), when it sent one. */
  readonly body?: Record<string, unknown>;
  /** The URL of the request. */
  readonly url: string;

  constructor(
    code: string,
    message: string,
    url: string,
    extra: { status?: number; body?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'BermClientError';
    this.code = code;
    this.url = url;
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.body !== undefined) this.body = extra.body;
  }

  /** The daemon's error object with the client's view on top: what `--json` failure output carries. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { ...this.body, code: this.code, message: this.message };
    if (this.status !== undefined) out.status = this.status;
    return out;
  }
}

/** Nothing answered at the daemon's address: it is not running, or listens elsewhere. */
export class DaemonUnreachableError extends BermClientError {
  readonly hint: string;

  constructor(baseUrl: string, url: string, cause: unknown) {
    const why = errorCode(cause) ?? (cause as Error)?.message ?? 'no answer';
    const hint = 'is bermd running? Start it with `bermd`, or point --url or BERM_URL at the address it prints';
    super('daemon-unreachable', `could not reach bermd at ${baseUrl} (${why}): ${hint}`, url, { cause });
    this.name = 'DaemonUnreachableError';
    this.hint = hint;
  }
}

export function isBermClientError(e: unknown): e is BermClientError {
  return e instanceof BermClientError;
}

/** The errno-style code of a network error, looking through any wrapping (`cause`). */
export function errorCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur !== undefined && cur !== null && depth < 5; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Failures of the connection itself, before anything reached the daemon. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ETIMEDOUT',
  'ENOENT',
]);

export function isUnreachable(e: unknown): boolean {
  const code = errorCode(e);
  return code !== undefined && UNREACHABLE.has(code);
}
