/**
 * What a failed send to bermd says, for `berm mcp`'s relay (mcp-bridge.ts): its HTTP status, bermd's
 * own JSON-RPC error, and the failure in words. Whatever answered is no more trusted than an image: the
 * words are as it gave them, for the caller to make printable.
 */
import type { JSONRPCErrorResponse } from './json-rpc.js';
import { McpHttpError } from './mcp-http/errors.js';

/**
 * The scopes bermd's 403 challenge asked for (`WWW-Authenticate: Bearer error="insufficient_scope",
 * scope="..."`: those the principal holds and the one it lacks), empty when it named none; undefined for
 * any other failure.
 */
export function refusedScope(error: unknown): string | undefined {
  return error instanceof McpHttpError ? error.refusedScope : undefined;
}

/** The HTTP status of a failed send, when bermd answered at all. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof McpHttpError ? error.status : undefined;
}

/**
 * The JSON-RPC error bermd answered a failed send with (its body), when the body holds one. Its id is
 * not read: bermd answers null where it refuses a request before reading it (a 503 `session-cap`).
 */
export function answeredError(error: unknown): JSONRPCErrorResponse['error'] | undefined {
  return errorOfBody(error instanceof McpHttpError ? error.body : undefined);
}

/** The JSON-RPC error an answer's body holds, if it holds one. */
export function errorOfBody(text: unknown): JSONRPCErrorResponse['error'] | undefined {
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
  if (scope !== undefined) return `answered 403: insufficient_scope, asking for ${scope}`;
  const status = statusOf(error);
  if (status === undefined) return quote(error instanceof Error ? error.message : String(error));
  // bermd's own words, else the body as it came (a proxy's page), else the transport's.
  const said = answeredError(error)?.message ?? ((error as McpHttpError).body || undefined);
  return said === undefined ? (error as McpHttpError).message : `answered ${status}: ${quote(said)}`;
}

function quote(said: string): string {
  return said.length > QUOTED ? `${said.slice(0, QUOTED)}...` : said;
}
