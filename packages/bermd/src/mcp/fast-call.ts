/**
 * The fast path of `/mcp`: a POST carrying one `tools/call` request is answered here, on the raw
 * response, rather than through the SDK: on a live 2025-era session, or as a 2026-07-28 request.
 *
 * Why: measured with bench/mcp.js (8 calls in flight, against a bare Node server in the same run), the
 * SDK's path spends about twice the main thread's time per call that this one does, in both generations,
 * and falls far below the throughput target (the figures are in docs/decisions.md). Per request the SDK copies the Node request into a web `Request`, streams every answer through
 * a `ReadableStream`, parses request and result with zod, and for 2026-07-28 builds a server, a
 * transport and abort controllers; the call is the one request a client makes thousands of times.
 *
 * What it keeps: the same tool-call code as the servers (`callTool`), the SDK's checks (a request
 * failing one, or carrying anything the fast path does not know, takes the SDK's path and gets its
 * answer), the same answer on the wire, and cancellation. For a 2025 session: one SSE `message` event
 * preceded by the call's own notifications, with the transport's headers; cancellation by
 * `notifications/cancelled`, by the session ending and by the client going away (a cancelled call's
 * stream ends without a response, as MCP asks). For 2026-07-28: one JSON body with the result stamped
 * `resultType` and `serverInfo`, turned into an SSE stream when an event the request asked for comes
 * first (the SDK's `auto` response mode); cancellation by the client closing the connection.
 * Anything else (initialize, lists, resources, discover, listen, batches, GET, DELETE) goes through the
 * SDK. test/mcp-wire.test.ts compares the raw answers of both paths for each generation.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type CallToolResult,
  type InboundClassificationOutcome,
  type JSONRPCMessage,
  type JSONRPCRequest,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { keepAlive } from '../app/index.js';
import { type Caller, Stop } from '../runtime/index.js';
import type { McpRequestTrace } from '../telemetry/index.js';
import type { Generation } from './catalog.js';
import { callTool, type EventMessage, isLoggingLevel, type McpCore, type SessionState, serverInfo } from './server.js';

export type RequestId = string | number;

/** The 2026-07-28 revision, the one modern revision the fast path knows the SDK's answers for. */
export const MODERN_REVISION = '2026-07-28';

/** What the fast path needs of a session. */
export interface FastCallSession {
  readonly id: string | undefined;
  readonly state: SessionState;
  /** Fast-path calls under way, by JSON-RPC id, for `notifications/cancelled`. */
  readonly calls: Map<RequestId, Stop>;
}

export interface FastCallRequest {
  id: RequestId;
  name: string;
  args: Record<string, unknown> | undefined;
  /** The request's `_meta` (an external write's idempotency key is read from it). */
  meta?: unknown;
}

/** A 2026-07-28 call, with the log level its `_meta` asks for. */
export interface ModernFastCallRequest extends FastCallRequest {
  state: SessionState;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && value.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

/** JSON-RPC ids and progress tokens as the SDK's schemas read them: a string or an integer. */
export function isIdLike(value: unknown): value is RequestId {
  return typeof value === 'string' || Number.isInteger(value);
}

/** The members the SDK's schema of a request allows (it is strict): anything more is its to refuse. */
const REQUEST_MEMBERS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);

/** The one `tools/call` in `body`, when it is well formed enough for the fast path to read. */
function callOf(body: unknown): (FastCallRequest & { params: Record<string, unknown> }) | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return undefined;
  const { id, params } = body;
  if (!isIdLike(id) || !isObject(params) || typeof params.name !== 'string') return undefined;
  for (const key in body) if (!REQUEST_MEMBERS.has(key)) return undefined;
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined;
  return { id, name: params.name, args: params.arguments as Record<string, unknown> | undefined, params };
}

/**
 * A 2025-era `_meta` the transport accepts and whose keys the fast path has nothing to do with (a task's
 * are the SDK's, and so is a call asking for progress, which the SDK's path sends).
 */
export function isPlainMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  return isObject(meta) && meta[RELATED_TASK_META_KEY] === undefined && meta.progressToken === undefined;
}

/** The call in `body` when the fast path may answer it on a 2025 session: one well-formed `tools/call` the transport would accept. */
export function fastCallOf(body: unknown, headers: IncomingHttpHeaders): FastCallRequest | undefined {
  const call = callOf(body);
  // Task-augmented calls and unusual shapes are the SDK's to answer (or refuse).
  if (call === undefined || call.params.task !== undefined || !isPlainMeta(call.params._meta)) return undefined;
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(headers['content-type'])) return undefined;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  return { id: call.id, name: call.name, args: call.args, meta: call.params._meta };
}

/** The params of a 2026-07-28 `tools/call` the fast path reads; a retry's `inputResponses` or `requestState` are the SDK's. */
const MODERN_PARAMS: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);
/** The `_meta` keys of a 2026-07-28 call the fast path knows to mean nothing more to the SDK than to it. */
export const MODERN_META: ReadonlySet<string> = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  'progressToken',
  // The W3C trace context 2026-07-28 reserves: read by the tracer before any answerer, nothing to the SDK.
  'traceparent',
  'tracestate',
  // An external write's idempotency key, which callTool reads as the SDK's path does.
  'io.berm/idempotency-key',
]);

/**
 * The call of a request the SDK classified as 2026-07-28 (`route`), when the fast path may answer it:
 * one well-formed `tools/call` whose standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`)
 * are there and agree with the body, as the SDK's handler requires. A Base64-encoded `Mcp-Name`, or
 * anything else the fast path does not read, is the SDK's to answer.
 */
export function modernFastCallOf(route: InboundClassificationOutcome, headers: IncomingHttpHeaders): ModernFastCallRequest | undefined {
  if (route.kind !== 'modern' || route.messageKind !== 'request' || route.classification.revision !== MODERN_REVISION) return undefined;
  return modernCallOf(route.message, headers);
}

/** The 2026-07-28 call in `message` the fast path may answer, whatever classified it; see `modernFastCallOf`. */
function modernCallOf(message: unknown, headers: IncomingHttpHeaders): ModernFastCallRequest | undefined {
  const call = callOf(message);
  if (call === undefined) return undefined;
  for (const key in call.params) if (!MODERN_PARAMS.has(key)) return undefined;
  const meta = call.params._meta;
  if (!isObject(meta) || !isObject(meta[CLIENT_CAPABILITIES_META_KEY])) return undefined;
  for (const key in meta) if (!MODERN_META.has(key)) return undefined;
  // A call asking for progress is the SDK's path's to answer: it sends the progress.
  if (meta.progressToken !== undefined) return undefined;
  const level = meta[LOG_LEVEL_META_KEY];
  if (level !== undefined && !isLoggingLevel(level)) return undefined;
  if (!isJsonContentType(headers['content-type'])) return undefined;
  if (headers['mcp-protocol-version'] !== MODERN_REVISION || headers['mcp-method'] !== 'tools/call') return undefined;
  if (headers['mcp-name'] !== call.name) return undefined;
  return { id: call.id, name: call.name, args: call.args, meta, state: { level } };
}

/**
 * What the SDK's classification reads of a fast-path call's `_meta` (every key the fast path lets through:
 * the envelope's, and the progress token's type), as one string.
 */
function envelopeKey(meta: Record<string, unknown>): string {
  return JSON.stringify({
    v: meta[PROTOCOL_VERSION_META_KEY],
    c: meta[CLIENT_CAPABILITIES_META_KEY],
    i: meta[CLIENT_INFO_META_KEY],
    l: meta[LOG_LEVEL_META_KEY],
    p: typeof meta.progressToken,
  });
}

/**
 * The 2026-07-28 envelopes the SDK's classification has accepted on calls the fast path takes, so that
 * the next such call carrying the same envelope is routed without it.
 *
 * Why: the classification parses every body with zod (as a response, an error, a request, then the
 * envelope), a sizeable share of what a 2026-07-28 call costs the main thread; and a client sends the
 * same envelope with every call. For a call the fast
 * path takes, its own checks (`modernFastCallOf`: the JSON-RPC members, the id's and progress token's
 * types, the params and `_meta` keys, the headers agreeing with the body) settle everything the
 * classification decides but the envelope's validity, which depends on the envelope alone; so an envelope
 * the classification accepted once is accepted again, and the route is the one it gave then.
 */
export class KnownEnvelopes {
  private readonly accepted = new Set<string>();

  /** At most `max` envelopes are remembered; past that the oldest is forgotten. */
  constructor(private readonly max = 64) {}

  /** The route the SDK's classification gives `body`, known without running it; undefined when it must run. */
  routeOf(body: unknown, headers: IncomingHttpHeaders): InboundClassificationOutcome | undefined {
    if (modernCallOf(body, headers) === undefined) return undefined;
    const meta = (body as { params: { _meta: Record<string, unknown> } }).params._meta;
    if (meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION || !this.accepted.has(envelopeKey(meta))) return undefined;
    return {
      kind: 'modern',
      messageKind: 'request',
      message: body as JSONRPCRequest,
      classification: { era: 'modern', revision: MODERN_REVISION },
    };
  }

  /** Remembers the envelope of a call the classification routed as `route`, when the fast path takes it. */
  learn(route: InboundClassificationOutcome, headers: IncomingHttpHeaders): void {
    if (modernFastCallOf(route, headers) === undefined || route.kind !== 'modern') return;
    const key = envelopeKey((route.message as { params: { _meta: Record<string, unknown> } }).params._meta);
    if (this.accepted.has(key)) return;
    if (this.accepted.size >= this.max) this.accepted.delete(this.accepted.values().next().value!);
    this.accepted.add(key);
  }
}

/** The ids a `notifications/cancelled` (alone or in a batch) names. */
export function cancelledIds(body: unknown): readonly RequestId[] {
  // Most bodies are one request: nothing to look through, nothing to allocate.
  if (!Array.isArray(body) && !(isObject(body) && body.method === 'notifications/cancelled')) return NO_IDS;
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

const NO_IDS: readonly RequestId[] = Object.freeze([]);

/**
 * A call on a 2025 session still running after this long sends its headers. The transport sends them
 * at once; the fast path holds them so that a quick call is one write, and a client or proxy waiting on
 * headers (or closing idle connections) sees them well before any timeout it may have. From then on,
 * as the transport does, the keep-alive comment goes out (app/keep-alive.ts) until the answer.
 */
export const FAST_HEADERS_AFTER_MS = 1000;

/** The headers of the SDK's SSE answers. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // The SDK's own: proxies that buffer (nginx) would otherwise hold the call's notifications.
  'x-accel-buffering': 'no',
};

/**
 * `headers` with the length of `body`, the whole answer, for an answer written at once. Node frames a body
 * of unknown length in chunks, written as several buffers; with its length, headers and body leave in one
 * write, and the client reads no chunk framing; writing the answer is a noticeable share of the main
 * thread's time per call in a CPU profile of bermd answering many callers.
 */
function sized(headers: Record<string, string>, body: string): Record<string, string> {
  headers['content-length'] = String(Buffer.byteLength(body));
  return headers;
}

function frame(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** The call's outcome as a JSON-RPC response: its result (as `stamp` makes it), or a protocol error. */
async function respond(
  core: McpCore,
  call: FastCallRequest,
  caller: Caller,
  run: () => Promise<CallToolResult>,
  stamp: (result: CallToolResult) => unknown,
): Promise<JSONRPCMessage> {
  try {
    return { result: stamp(await run()), jsonrpc: '2.0', id: call.id } as JSONRPCMessage;
  } catch (e) {
    const error =
      e instanceof ProtocolError ? e : new ProtocolError(ProtocolErrorCode.InternalError, e instanceof Error ? e.message : String(e));
    if (!(e instanceof ProtocolError)) core.logger.error({ err: e, tool: call.name, principal: caller.name }, 'tools/call failed');
    return {
      jsonrpc: '2.0',
      id: call.id,
      error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
    };
  }
}

/** Which path answered is for the operator at debug, and for the tests that compare the two paths' bytes: a log line changes nothing on the wire. */
function logFinished(core: McpCore, session: string | undefined, call: FastCallRequest, caller: Caller): void {
  core.logger.debug({ session, rpc_id: call.id, tool: call.name, principal: caller.name, via: 'fast-path' }, 'tools/call finished');
}

/** A stop that fires when `res` closes before its answer is written: the client went away. */
function abortOnClose(res: ServerResponse): { controller: Stop; release(): void } {
  const controller = new Stop();
  const onClose = (): void => {
    if (!res.writableFinished) controller.abort();
  };
  res.once('close', onClose);
  return { controller, release: () => res.off('close', onClose) };
}

/**
 * Answers `call` on a 2025 session on `res`, for `caller`, telling `trace` (the request's span, when traced)
 * the message it answers. Never rejects: a failure becomes a JSON-RPC error on the wire.
 */
export async function answerFastCall(
  core: McpCore,
  session: FastCallSession,
  call: FastCallRequest,
  res: ServerResponse,
  caller: Caller,
  trace?: McpRequestTrace,
): Promise<void> {
  const headers: Record<string, string> = { ...SSE_HEADERS };
  if (session.id !== undefined) headers['mcp-session-id'] = session.id;
  const { controller, release } = abortOnClose(res);
  session.calls.set(call.id, controller);
  // Headers go out with the first frame, so a call with no notifications is one write.
  const write = (text: string, last: boolean): void => {
    if (res.destroyed) return;
    if (!res.headersSent) res.writeHead(200, last ? sized(headers, text) : headers);
    if (last) res.end(text);
    else res.write(text);
  };
  let keeping: NodeJS.Timeout | undefined;
  const waiting = setTimeout(() => {
    if (res.destroyed) return;
    if (!res.headersSent) res.writeHead(200, headers).flushHeaders();
    keeping = keepAlive(res, core.keepAliveMs);
  }, FAST_HEADERS_AFTER_MS).unref();
  const notify = async (params: EventMessage): Promise<void> =>
    write(frame({ jsonrpc: '2.0', method: 'notifications/message', params }), false);
  let message: JSONRPCMessage;
  try {
    message = await respond(
      core,
      call,
      caller,
      () => callTool(core, session.state, 'legacy', call.name, call.args, { caller, signal: controller, notify, meta: call.meta, trace }),
      (result) => result,
    );
  } finally {
    clearTimeout(waiting);
    clearInterval(keeping);
    session.calls.delete(call.id);
    release();
  }
  logFinished(core, session.id, call, caller);
  // A call its client cancelled, or whose session ended, gets no response (MCP's cancellation: the SDK's
  // server sends none either); its stream just ends.
  if (controller.aborted) write('', true);
  else {
    if (!res.destroyed) trace?.answered(message);
    write(frame(message), true);
  }
}

/**
 * Answers a 2026-07-28 `call` on `res`, as the SDK's handler does in its `auto` response mode: one
 * JSON body, unless an event the request asked for comes before the result, which turns the answer
 * into an SSE stream (with the SDK's keep-alive comments from then on). Runs it for `caller`, telling
 * `trace` (the request's span, when traced) the message it answers. Never rejects.
 */
export async function answerModernFastCall(
  core: McpCore,
  call: ModernFastCallRequest,
  res: ServerResponse,
  caller: Caller,
  trace?: McpRequestTrace,
): Promise<void> {
  const { controller, release } = abortOnClose(res);
  let keeping: NodeJS.Timeout | undefined;
  const stream = (text: string): void => {
    if (res.destroyed) return;
    if (!res.headersSent) {
      res.writeHead(200, SSE_HEADERS);
      keeping = keepAlive(res, core.keepAliveMs);
    }
    res.write(text);
  };
  const notify = async (params: EventMessage): Promise<void> => stream(frame({ jsonrpc: '2.0', method: 'notifications/message', params }));
  const generation: Generation = 'modern';
  const info = serverInfo(core);
  let message: JSONRPCMessage;
  try {
    message = await respond(
      core,
      call,
      caller,
      () => callTool(core, call.state, generation, call.name, call.args, { caller, signal: controller, notify, meta: call.meta, trace }),
      (result) => ({ ...result, resultType: 'complete', _meta: { ...result._meta, [SERVER_INFO_META_KEY]: info } }),
    );
  } finally {
    clearInterval(keeping);
    release();
  }
  logFinished(core, undefined, call, caller);
  // The client closed the connection: nobody is there to answer.
  if (controller.aborted || res.destroyed) {
    res.end();
    return;
  }
  trace?.answered(message);
  if (res.headersSent) {
    res.end(frame(message));
    return;
  }
  const text = JSON.stringify(message);
  res.writeHead(200, sized({ 'content-type': 'application/json' }, text)).end(text);
}
