/**
 * What a failed send to bermd says, for `berm mcp`'s relay (mcp-bridge.ts): its HTTP status, bermd's
 * own JSON-RPC error, and the failure in words. Whatever answered is no more trusted than an image: the
 * words are as it gave them, for the caller to make printable.
 */
import { InsufficientScopeError, type JSONRPCErrorResponse, type RequestId } from '@modelcontextprotocol/client';

/**
 * The scopes bermd's 403 challenge asked for (`WWW-Authenticate: Bearer error="insufficient_scope",
 * scope="..."`: those the principal holds and the one it lacks), which the SDK's transport throws as an
 * `InsufficientScopeError`, without the answer's status or body.
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
  return errorOfBody((error as { data?: { text?: unknown } } | undefined)?.data?.text);
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
  const said = answeredError(error)?.message ?? (error instanceof Error ? error.message : String(error));
  const quoted = said.length > QUOTED ? `${said.slice(0, QUOTED)}...` : said;
  return status === undefined ? quoted : `answered ${status}: ${quoted}`;
}

/**
 * The bodies of bermd's 403s, kept by the id of the request each answers until the relay answers that
 * request: the SDK's transport reads the body of a 403 `insufficient_scope` and throws without it, and
 * bermd's JSON-RPC error in it is what the client should get.
 */
export class RefusalBodies {
  private readonly bodies = new Map<RequestId, string>();

  /** Keeps `text`, the answer to the request whose JSON is `sent` (a batch, or a notification, has no one id). */
  keep(sent: unknown, text: string): void {
    if (typeof sent !== 'string') return;
    let id: unknown;
    try {
      id = (JSON.parse(sent) as { id?: unknown } | null)?.id;
    } catch {
      return;
    }
    if (typeof id === 'string' || typeof id === 'number') this.bodies.set(id, text);
  }

  /** The body kept for request `id`, forgotten once taken. */
  take(id: RequestId): string | undefined {
    const text = this.bodies.get(id);
    this.bodies.delete(id);
    return text;
  }
}
