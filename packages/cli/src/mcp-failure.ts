/**
 * What a failed send to bermd says, for `berm mcp`'s relay (mcp-bridge.ts): its HTTP status, bermd's
 * own JSON-RPC error, and the failure in words. Whatever answered is no more trusted than an image: the
 * words are as it gave them, for the caller to make printable.
 */
import { InsufficientScopeError, type JSONRPCErrorResponse } from '@modelcontextprotocol/client';

/**
 * The scope bermd's 403 named (`WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`), which
 * the SDK's transport throws as an `InsufficientScopeError` rather than with the answer's body.
 */
export function refusedScope(error: unknown): string | undefined {
  if (!InsufficientScopeError.isInstance(error)) return undefined;
  return error.requiredScope ?? '';
}

/** The HTTP status of a failed send, when bermd answered at all. */
export function statusOf(error: unknown): number | undefined {
  if (refusedScope(error) !== undefined) return 403;
  const data = (error as { data?: { status?: unknown } } | undefined)?.data;
  return typeof data?.status === 'number' ? data.status : undefined;
}

/**
 * The JSON-RPC error bermd answered a failed send with (its body), when the body holds one. Its id is
 * not read: bermd answers null where it refuses a request before reading it (a 503 `session-cap`).
 */
export function answeredError(error: unknown): JSONRPCErrorResponse['error'] | undefined {
  const text = (error as { data?: { text?: unknown } } | undefined)?.data?.text;
  if (typeof text !== 'string') return undefined;
  let body: { error?: { code?: unknown; message?: unknown; data?: unknown } } | null;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return undefined;
  }
  const said = body?.error;
  if (typeof said !== 'object' || said === null || !Number.isInteger(said.code) || typeof said.message !== 'string') return undefined;
  return { code: said.code as number, message: said.message, ...(said.data === undefined ? {} : { data: said.data }) };
}

/** How much of an answer that is not bermd's JSON-RPC is quoted: enough to tell a proxy's page from bermd. */
const QUOTED = 300;

/** What went wrong, in words: the connection's error, or what bermd answered; as it came, to be made printable. */
export function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  const scope = refusedScope(error);
  if (scope !== undefined) return `answered 403: the token does not hold the scope ${scope}`;
  const status = statusOf(error);
  const said = answeredError(error)?.message ?? (error instanceof Error ? error.message : String(error));
  const quoted = said.length > QUOTED ? `${said.slice(0, QUOTED)}...` : said;
  return status === undefined ? quoted : `answered ${status}: ${quoted}`;
}
