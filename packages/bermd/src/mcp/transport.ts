/**
 * The seam between `/mcp` and what answers it: how a request's generation is told (routing.ts), then who
 * answers. Once the plugin knows a request's generation (and, for a 2025-era one, its session), it hands
 * the exchange to the answerers in order, and the first that takes it answers on the raw response:
 *
 * - `fastCall`: one `tools/call` that the SDK would accept, on a live 2025 session or as a 2026-07-28
 *   request, answered by fast-call.ts with the same tool-call code as the servers. It is a measured
 *   departure from the SDK (see fast-call.ts for the figures), so it takes nothing it is not sure of;
 * - `fastList`: one `tools/list` without a cursor, answered by fast-list.ts from the catalog's serialised list;
 * - `sdk`: everything else, through the session's `NodeStreamableHTTPServerTransport` (2025) or the
 *   SDK's stateless handler (2026-07-28, stateless.ts).
 *
 * Both departures from the SDK (the cached routing and the fast path) are chosen together, once, when
 * the endpoint is made (`mcpPaths`): `--mcp-fast-path false` takes neither, and every request goes
 * through the SDK. A test compares the two on the wire for the requests the fast path takes, in both
 * generations and both ways (test/mcp-wire.test.ts), so a change of the SDK that the fast path does not
 * follow fails there rather than in a client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, InboundClassificationOutcome } from '@modelcontextprotocol/server';
import type { Caller } from '../runtime/index.js';
import type { McpRequestTrace } from '../telemetry/index.js';
import { tracedAuthInfoOf } from './access.js';
import { answerFastCall, answerModernFastCall, fastCallOf, modernFastCallOf } from './fast-call.js';
import { answerFastList, answerModernFastList, fastListOf, modernFastListOf } from './fast-list.js';
import { CachedRouting, type McpRouting, sdkRouting } from './routing.js';
import type { McpCore } from './server.js';
import type { Session } from './sessions.js';
import type { StatelessMcp } from './stateless.js';

interface Exchange {
  core: McpCore;
  /** Who makes the request: what it is answered is what this principal may see, and its calls run with it. */
  caller: Caller;
  request: IncomingMessage;
  /** The parsed JSON-RPC body of a POST; undefined for GET and DELETE. */
  body: unknown;
  res: ServerResponse;
  /** The request's span when it is traced: an answerer that builds the answer's message tells it so. */
  trace?: McpRequestTrace;
}

/** A 2025-era request, whose session is known. */
export interface SessionExchange extends Exchange {
  generation: 'legacy';
  session: Session;
  /** The session is being opened by this request (an `initialize`). */
  fresh: boolean;
}

/** A request the SDK classified as 2026-07-28 (or refuses as a malformed one). */
export interface StatelessExchange extends Exchange {
  generation: 'modern';
  stateless: StatelessMcp;
  route: InboundClassificationOutcome;
}

export type McpExchange = SessionExchange | StatelessExchange;

export interface McpAnswerer {
  readonly name: string;
  /** Answers the exchange (resolving once the answer is sent), or answers undefined to leave it to the next answerer. */
  answer(exchange: McpExchange): Promise<void> | undefined;
}

/** A call of a harness that may ask its client (elicitation, sampling): the SDK's path alone can put the question. */
function asks(core: McpExchange['core'], name: string): boolean {
  return core.catalog.lookup(name)?.asks === true;
}

export const fastCall: McpAnswerer = {
  name: 'fast-call',
  answer(exchange) {
    const { core, caller, request, body, res, trace } = exchange;
    if (exchange.generation === 'modern') {
      const call = modernFastCallOf(exchange.route, request.headers);
      return call === undefined || asks(core, call.name) ? undefined : answerModernFastCall(core, call, res, caller, trace);
    }
    if (request.method !== 'POST' || exchange.fresh) return undefined;
    const call = fastCallOf(body, request.headers);
    return call === undefined || asks(core, call.name) ? undefined : answerFastCall(core, exchange.session, call, res, caller, trace);
  },
};

export const fastList: McpAnswerer = {
  name: 'fast-list',
  answer(exchange) {
    const { core, caller, request, body, res } = exchange;
    if (exchange.generation === 'modern') {
      const id = modernFastListOf(exchange.route, request.headers);
      if (id === undefined) return undefined;
      exchange.trace?.readBack();
      return answerModernFastList(core, id, res, caller);
    }
    if (request.method !== 'POST' || exchange.fresh) return undefined;
    const id = fastListOf(body, request.headers);
    if (id === undefined) return undefined;
    exchange.trace?.readBack();
    return answerFastList(core, exchange.session.id, id, res, caller);
  },
};

export const sdkTransport: McpAnswerer = {
  name: 'sdk',
  answer(exchange) {
    // The SDK writes its answers itself: the request's span reads them back.
    exchange.trace?.readBack();
    if (exchange.generation === 'modern')
      return exchange.stateless.answer(exchange.request, exchange.body, exchange.res, exchange.caller, exchange.trace);
    // The session's transport hands `req.auth` to the handlers as the request's `authInfo`.
    const request: IncomingMessage & { auth?: AuthInfo } = exchange.request;
    request.auth = tracedAuthInfoOf(exchange.caller, exchange.trace);
    return exchange.session.transport.handleRequest(request, exchange.res, exchange.body);
  },
};

/** How an endpoint routes its requests and who answers them, in order (the last answers everything). */
export interface McpPaths {
  readonly routing: McpRouting;
  readonly answerers: readonly McpAnswerer[];
}

const FAST_ANSWERERS: readonly McpAnswerer[] = [fastCall, fastList, sdkTransport];
const SDK_ANSWERERS: readonly McpAnswerer[] = [sdkTransport];

/**
 * The paths of one endpoint: with `fastPath` (`--mcp-fast-path`, true by default) the cached routing and
 * the fast path before the SDK, without it the SDK alone. Chosen once: a request pays for no choice.
 */
export function mcpPaths(fastPath = true): McpPaths {
  return fastPath ? { routing: new CachedRouting(), answerers: FAST_ANSWERERS } : { routing: sdkRouting, answerers: SDK_ANSWERERS };
}
