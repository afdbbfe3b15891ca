/**
 * The fast path of `/mcp`: a POST carrying one `tools/call` request on a live session is answered here,
 * on the raw response, rather than through the SDK's transport.
 *
 * Why: measured with bench/mcp.js, the transport's Node adapter (Node request to a web `Request`, a
 * `ReadableStream` per answer, its headers flushed in their own write) and the zod parses of the
 * request and the result cost about 150 µs of the main thread per call, four times what a bare Node
 * server spends on the whole exchange; the call is the one request a client makes thousands of times.
 *
 * What it keeps: the same tool-call code as the session's server (`callTool`), the transport's checks
 * (session, Accept, Content-Type, protocol version: a request failing one takes the SDK's path and gets
 * its answer), the same answer on the wire (one SSE `message` event, preceded by the call's own
 * notifications), cancellation by `notifications/cancelled`, by the session ending and by the client
 * going away (a cancelled call's stream ends without a response, as MCP asks). Anything
 * else (initialize, lists, resources, batches, GET, DELETE) goes through the transport.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { DEFAULT_SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import {
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { callTool, type McpCore, type SessionState } from './server.js';

export type RequestId = string | number;

/** What the fast path needs of a session. */
export interface FastCallSession {
  readonly id: string | undefined;
  readonly state: SessionState;
  /** Fast-path calls under way, by JSON-RPC id, for `notifications/cancelled`. */
  readonly calls: Map<RequestId, AbortController>;
}

export interface FastCallRequest {
  id: RequestId;
  name: string;
  args: Record<string, unknown> | undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && value.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

/** JSON-RPC ids and progress tokens as the SDK's schemas read them: a string or an integer. */
function isIdLike(value: unknown): value is RequestId {
  return typeof value === 'string' || Number.isInteger(value);
}

/** The members the transport's schema of a request allows (it is strict): anything more is its to refuse. */
const REQUEST_MEMBERS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);

/** A `_meta` the transport accepts and whose keys the fast path has nothing to do with (a task's are the SDK's). */
function isPlainMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  if (!isObject(meta) || meta[RELATED_TASK_META_KEY] !== undefined) return false;
  return meta.progressToken === undefined || isIdLike(meta.progressToken);
}

/** The call in `body` when the fast path may answer it: one well-formed `tools/call` the transport would accept. */
export function fastCallOf(body: unknown, headers: IncomingHttpHeaders): FastCallRequest | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return undefined;
  const { id, params } = body;
  if (!isIdLike(id) || !isObject(params) || typeof params.name !== 'string') return undefined;
  for (const key in body) if (!REQUEST_MEMBERS.has(key)) return undefined;
  // Task-augmented calls and unusual shapes are the SDK's to answer (or refuse).
  if (params.task !== undefined || (params.arguments !== undefined && !isObject(params.arguments)) || !isPlainMeta(params._meta))
    return undefined;
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(headers['content-type'])) return undefined;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  return { id, name: params.name, args: params.arguments as Record<string, unknown> | undefined };
}

/** The ids a `notifications/cancelled` (alone or in a batch) names. */
export function cancelledIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? body : [body];
  const ids: RequestId[] = [];
  for (const m of messages) {
    if (isObject(m) && m.method === 'notifications/cancelled' && isObject(m.params)) {
      const id = m.params.requestId;
      if (typeof id === 'string' || typeof id === 'number') ids.push(id);
    }
  }
  return ids;
}

/**
 * A call still running after this long sends its headers. The transport sends them at once; the fast
 * path holds them so that a quick call is one write, and a client or proxy waiting on headers (or
 * closing idle connections) sees them well before any timeout it may have. From then on, as the
 * transport does, an SSE comment goes out every DEFAULT_SSE_KEEP_ALIVE_MS until the answer.
 */
export const FAST_HEADERS_AFTER_MS = 1000;

function frame(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** Answers `call` on `res`. Never rejects: a failure becomes a JSON-RPC error on the wire. */
export async function answerFastCall(core: McpCore, session: FastCallSession, call: FastCallRequest, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // The transport's own: proxies that buffer (nginx) would otherwise hold the call's notifications.
    'x-accel-buffering': 'no',
  };
  if (session.id !== undefined) headers['mcp-session-id'] = session.id;
  const controller = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) controller.abort();
  };
  res.once('close', onClose);
  session.calls.set(call.id, controller);
  // Headers go out with the first frame, so a call with no notifications is one write.
  const write = (text: string, last: boolean): void => {
    if (res.destroyed) return;
    if (!res.headersSent) res.writeHead(200, headers);
    if (last) res.end(text);
    else res.write(text);
  };
  const tick = (): void => {
    if (res.destroyed) return;
    if (res.headersSent) res.write(': keepalive\n\n');
    else res.writeHead(200, headers).flushHeaders();
    waiting = setTimeout(tick, DEFAULT_SSE_KEEP_ALIVE_MS).unref();
  };
  let waiting = setTimeout(tick, FAST_HEADERS_AFTER_MS).unref();
  let message: JSONRPCMessage;
  try {
    const result = await callTool(core, session.state, call.name, call.args, {
      signal: controller.signal,
      notify: async (params) => write(frame({ jsonrpc: '2.0', method: 'notifications/message', params }), false),
    });
    message = { jsonrpc: '2.0', id: call.id, result };
  } catch (e) {
    const error = e instanceof McpError ? e : new McpError(ErrorCode.InternalError, e instanceof Error ? e.message : String(e));
    if (!(e instanceof McpError)) core.logger.error({ err: e, tool: call.name }, 'tools/call failed');
    message = {
      jsonrpc: '2.0',
      id: call.id,
      error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
    };
  } finally {
    clearTimeout(waiting);
    session.calls.delete(call.id);
    res.off('close', onClose);
  }
  // Which path answered is for the operator at debug, and for the tests that compare the two paths'
  // bytes: a log line changes nothing on the wire.
  core.logger.debug({ session: session.id, rpc_id: call.id, tool: call.name, via: 'fast-path' }, 'tools/call finished');
  // A call its client cancelled, or whose session ended, gets no response (MCP's cancellation: the SDK's
  // server sends none either); its stream just ends.
  if (controller.signal.aborted) write('', true);
  else write(frame(message), true);
}
