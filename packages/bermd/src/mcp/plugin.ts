/**
 * `/mcp` as a fastify plugin, serving both generations of MCP on one endpoint. Fastify reads and
 * bounds the body; the SDK's classification of the request (its body first, then its headers), through
 * the routing chosen when the endpoint is made (routing.ts, transport.ts), says which generation it
 * belongs to:
 *
 * - 2026-07-28 (a `_meta` envelope on every request, no session): the stateless handler
 *   (stateless.ts), which also answers the requests its checks refuse. A stale `mcp-session-id` on
 *   such a request means nothing, as that generation asks.
 * - 2025-11-25 and older: POST carries JSON-RPC (an `initialize` opens a session), GET opens a
 *   session's stream of server messages, DELETE ends a session.
 *
 * One of the answerers (transport.ts) then answers on the raw response (the reply is hijacked). What
 * every request passes first (Host and Origin, the token) is the app's (app/); its refusals are answered
 * here, as JSON-RPC.
 *
 * Before any answerer, what the request's principal may do (access.ts): a 2025 session is reached only
 * with the token of the principal that opened it (another's is answered 404, as an unknown session), and
 * a `tools/call` of a tool it may not call is refused 403 with the `WWW-Authenticate` challenge naming
 * the scope, on either path, so nothing runs and a client can step up.
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, SCOPE } from '@berm/protocol';
import type { InboundClassificationOutcome } from '@modelcontextprotocol/server';
import { drainRejectedBody, refuseScope } from '../app/index.js';
import { INTERNAL_MESSAGE, wireErrorOf } from '../error-table.js';
import { REFUSED_CODE, refusalMessage, refusedCall } from './access.js';
import { cancelledIds } from './fast-call.js';
import { recordRefusal } from './server.js';
import type { BermdMetrics, McpRequestTrace } from '../telemetry/index.js';
import { initOf, SessionCapError, type McpSessions, type Session } from './sessions.js';
import type { StatelessMcp } from './stateless.js';
import { type McpAnswerer, type McpExchange, type McpPaths, mcpPaths } from './transport.js';
import { numberDefault } from '../limits.js';

export const MCP_PATH = '/mcp';

/**
 * A JSON-RPC request to a tool is its arguments and a little framing; an image is not. 4 MiB (the
 * SDK's own default bound) keeps `/mcp` from accepting image-sized bodies.
 */
export const MAX_MCP_BODY = numberDefault('mcp-max-body');

/** How much of a too-large body is read and dropped before the connection is closed instead. */
const MAX_DRAIN = 64 * 1024 * 1024;

export interface McpEndpointOptions {
  sessions: McpSessions;
  stateless: StatelessMcp;
  maxBodySize?: number;
  /** The cached routing and the fast path before the SDK (`--mcp-fast-path`); true by default, false sends every request through the SDK. */
  fastPath?: boolean;
}

/** `/mcp`: the plugin to register into the app, and how to stop it. */
export interface McpEndpoint {
  plugin: FastifyPluginAsync;
  /** Refuses new requests, lets those under way answer, then ends every session and listen stream. */
  close(): Promise<void>;
}

/**
 * JSON-RPC's error shape, for answers given before a transport is involved; `data` carries bermd's stable
 * code when there is one (and a refused scope's `scope`); `id` the request's, when it was read.
 */
function rpcError(
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
  data?: { code: string; scope?: string },
  id: string | number | null = null,
): FastifyReply {
  const error = data === undefined ? { code, message } : { code, message, data };
  return reply.code(status).type('application/json').send({ jsonrpc: '2.0', error, id });
}

/** The scope an error refused, when it says. */
function scopeOf(error: ApiError): { scope?: string } {
  return typeof error.details.scope === 'string' ? { scope: error.details.scope } : {};
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Records the duration of one JSON-RPC request (not a notification, a batch or a listen, whose answer
 * lasts as long as its client wants) from its arrival to the end of its answer; `error.type` is the HTTP
 * status of an answer that refused it. A `tools/call` is measured where it is called (server.ts), on
 * either path, with what the call answered.
 */
function measure(metrics: BermdMetrics, body: unknown, reply: FastifyReply, started: number): void {
  if (!isObject(body) || body.id === undefined || body.method === 'tools/call' || body.method === 'subscriptions/listen') return;
  const { method } = body;
  reply.raw.once('finish', () => {
    const status = reply.raw.statusCode;
    metrics.operationEnded(method, (performance.now() - started) / 1000, undefined, status >= 400 ? String(status) : undefined);
  });
}

/** A request whose answer lasts as long as its client wants: a session's stream, a 2026 listen. */
function isStream(request: FastifyRequest, route: InboundClassificationOutcome | undefined): boolean {
  return request.method === 'GET' || (route?.kind === 'modern' && route.message.method === 'subscriptions/listen');
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { sessions, stateless } = options;
  const { metrics, tracing } = sessions.core;
  const { routing, answerers }: McpPaths = mcpPaths(options.fastPath);
  const bodyLimit = options.maxBodySize ?? MAX_MCP_BODY;
  const underWay = new Set<Promise<void>>();
  let closing = false;

  /** The 403 for a `tools/call` in `body` the request's principal may not make, with its challenge; undefined when there is none. */
  const refuseCall = (
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    started: number,
    traced: McpRequestTrace | undefined,
  ): FastifyReply | undefined => {
    const refusal = refusedCall(sessions.core.catalog, request.principal, body);
    if (refusal === undefined) return undefined;
    traced?.readBack();
    const { id, name, missing } = refusal;
    recordRefusal(sessions.core, name, started);
    request.log.info(
      { tool: name, scope: missing, principal: request.principal.name },
      'tools/call refused: the principal lacks the scope',
    );
    // The challenge as every refusal of a scope words it (app/); the message names the tool called.
    const refused = refuseScope(request, reply, missing);
    const message = refusalMessage(request.principal.name, name, missing);
    return rpcError(reply, refused.status, REFUSED_CODE, message, { code: refused.code, scope: missing }, id);
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const started = performance.now();
    if (closing) return rpcError(reply, 503, -32000, 'bermd is shutting down');

    let body: unknown;
    if (request.method === 'POST') {
      const raw = request.body;
      try {
        body = JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : '');
      } catch {
        return rpcError(reply, 400, -32700, 'Parse error: the body is not JSON');
      }
    }

    if (metrics !== undefined) measure(metrics, body, reply, started);
    // One boolean when tracing is off: no span, no context.
    if (tracing === undefined) return serve(request, reply, body, started, undefined);
    const traced = tracing.mcpRequest(request.headers, body, reply.raw);
    if (traced === undefined) return serve(request, reply, body, started, undefined);
    // What is thrown is answered by the error handler, which does not tell the span its message.
    return serve(request, reply, body, started, traced).catch((e: unknown) => {
      traced.readBack();
      throw e;
    });
  };

  const serve = async (
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    started: number,
    traced: McpRequestTrace | undefined,
  ): Promise<FastifyReply | undefined> => {
    const route = routing.route(request, body);
    const caller = request.principal;
    let exchange: McpExchange;
    let session: Session | undefined;
    if (route === undefined || route.kind === 'legacy') {
      const initialize = route === undefined ? isObject(body) && body.method === 'initialize' : route.reason === 'initialize';
      const id = request.headers['mcp-session-id'];
      if (typeof id === 'string') {
        // Another principal's session is answered as one that does not exist: its id says nothing more.
        // One this replica does not hold may be rebuilt from a store the replicas share (sessions.ts).
        try {
          session = sessions.get(id, caller) ?? (await sessions.restore(id, caller, request.method === 'GET'));
        } catch (e) {
          if (!(e instanceof SessionCapError)) throw e;
          throw wireErrorOf(e, e.message, { cap: e.cap });
        }
        // 404 tells a client its session is gone, so it starts a new one (Streamable HTTP, "session management").
        if (session === undefined) {
          traced?.readBack();
          return rpcError(reply, 404, -32001, 'Session not found');
        }
        // The same principal, perhaps with a token holding more scopes now: what the session is sent follows.
        session.caller = caller;
      } else if (!initialize) {
        traced?.readBack();
        return rpcError(reply, 400, -32000, 'Bad Request: no valid mcp-session-id; start a session with an initialize request');
      }
      const refused = refuseCall(request, reply, body, started, traced);
      if (refused !== undefined) return refused;
      if (session === undefined) {
        try {
          session = await sessions.open(caller, initOf(body));
        } catch (e) {
          if (!(e instanceof SessionCapError)) throw e;
          throw wireErrorOf(e, e.message, { cap: e.cap });
        }
      }
      traced?.session(session.sessionId);
      exchange = {
        generation: 'legacy',
        core: sessions.core,
        caller,
        session,
        fresh: typeof id !== 'string',
        request: request.raw,
        body,
        res: reply.raw,
        trace: traced,
      };
    } else {
      const refused = refuseCall(request, reply, body, started, traced);
      if (refused !== undefined) return refused;
      exchange = {
        generation: 'modern',
        core: sessions.core,
        caller,
        stateless,
        route,
        request: request.raw,
        body,
        res: reply.raw,
        trace: traced,
      };
    }

    reply.hijack();
    const res = reply.raw;
    if (session !== undefined) {
      session.active++;
      session.lastSeen = Date.now();
      sessions.touch(session);
      if (request.method === 'POST') {
        const cancelled = cancelledIds(body);
        sessions.cancel(session, cancelled);
        sessions.cancelElsewhere(session, cancelled);
      }
      if (request.method === 'GET') watchStream(sessions, session, res);
    }
    const done = answered(answer(answerers, exchange), request, res, session, traced);
    if (isStream(request, route)) {
      await done;
      return;
    }
    underWay.add(done);
    await done;
    underWay.delete(done);
    if (exchange.generation === 'legacy' && exchange.fresh) sessions.answered(exchange.session);
  };

  const plugin: FastifyPluginAsync = async (app) => {
    // The app's error handler speaks the control API; a client of /mcp reads JSON-RPC.
    app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
      // What the app refuses before the route (a foreign Host or Origin), in JSON-RPC's terms.
      if (error instanceof ApiError) return rpcError(reply, error.status, -32000, error.message, { code: error.code, ...scopeOf(error) });
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        drainRejectedBody(request, reply, MAX_DRAIN);
        return rpcError(reply, 413, -32600, `the request body is larger than ${bodyLimit} bytes`);
      }
      if (error.statusCode !== undefined && error.statusCode < 500) return rpcError(reply, error.statusCode, -32600, error.message);
      request.log.error({ err: error }, 'mcp request failed');
      return rpcError(reply, 500, -32603, INTERNAL_MESSAGE);
    });
    app.route({
      method: ['GET', 'POST', 'DELETE'],
      url: MCP_PATH,
      bodyLimit,
      // A principal that may call no harness has nothing here; one that may call some sees only those (server.ts).
      config: { access: (principal) => (principal.mayCallAny() ? undefined : SCOPE.call) },
      // A tool call is a request: logging each one at info would write two lines per call. They are
      // logged when the operator asks for debug.
      logLevel: app.log.level === 'trace' ? 'trace' : app.log.level === 'debug' ? 'debug' : 'warn',
      handler: handle,
    });
  };

  return {
    plugin,
    async close() {
      closing = true;
      while (underWay.size > 0) await Promise.allSettled([...underWay]);
      await Promise.all([stateless.close(), sessions.close()]);
    },
  };
}

/**
 * Tells `sessions` when the session's GET stream opens and closes. The transport registers the stream
 * before it writes the headers, so once they are written, messages sent to the session reach it.
 */
function watchStream(sessions: McpSessions, session: Session, res: FastifyReply['raw']): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: typeof res, ...args: Parameters<typeof res.writeHead>) {
    const result = writeHead.apply(this, args);
    if (res.statusCode === 200) {
      res.once('close', () => sessions.streamClosed(session));
      sessions.streamOpened(session);
    }
    return result;
  } as typeof res.writeHead;
}

/**
 * Settles once `answering` has: a failure is logged and ends the response; the session and the request's
 * span are told the request ended. Never rejects.
 */
async function answered(
  answering: Promise<void>,
  request: FastifyRequest,
  res: FastifyReply['raw'],
  session: Session | undefined,
  trace: McpRequestTrace | undefined,
): Promise<void> {
  try {
    await answering;
  } catch (e) {
    request.log.error({ err: e }, 'mcp request failed');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
    res.end();
  } finally {
    if (session !== undefined) {
      session.active--;
      session.lastSeen = Date.now();
    }
    trace?.settled();
  }
}

/** The first answerer that takes the exchange answers it. */
function answer(answerers: readonly McpAnswerer[], exchange: McpExchange): Promise<void> {
  for (const answerer of answerers) {
    const done = answerer.answer(exchange);
    if (done !== undefined) return done;
  }
  return Promise.reject(new Error('no answerer took the request'));
}
