/**
 * The seam between `/mcp` and what answers it. Once the plugin knows a request's session, it hands the
 * exchange to the answerers in order, and the first that takes it answers on the raw response:
 *
 * - `fastCall`: one `tools/call` on a live session that the SDK's transport would accept, answered by
 *   fast-call.ts with the same tool-call code as the session's server. It is a measured departure from
 *   the SDK (see fast-call.ts for the figures), so it takes nothing it is not sure of;
 * - `sdkTransport`: everything else, through the session's `StreamableHTTPServerTransport`.
 *
 * A test compares the two on the wire for the requests the fast path takes (test/mcp-wire.test.ts), so a
 * change of the SDK that the fast path does not follow fails there rather than in a client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerFastCall, fastCallOf } from './fast-call.js';
import type { McpCore } from './server.js';
import type { Session } from './sessions.js';

/** One `/mcp` request whose session is known. */
export interface McpExchange {
  core: McpCore;
  session: Session;
  /** The session is being opened by this request (an `initialize`). */
  fresh: boolean;
  request: IncomingMessage;
  /** The parsed JSON-RPC body of a POST; undefined for GET and DELETE. */
  body: unknown;
  res: ServerResponse;
}

export interface McpAnswerer {
  readonly name: string;
  /** Answers the exchange (resolving once the answer is sent), or answers undefined to leave it to the next answerer. */
  answer(exchange: McpExchange): Promise<void> | undefined;
}

export const fastCall: McpAnswerer = {
  name: 'fast-call',
  answer({ core, session, fresh, request, body, res }) {
    if (request.method !== 'POST' || fresh) return undefined;
    const call = fastCallOf(body, request.headers);
    return call === undefined ? undefined : answerFastCall(core, session, call, res);
  },
};

export const sdkTransport: McpAnswerer = {
  name: 'sdk',
  answer: ({ session, request, body, res }) => session.transport.handleRequest(request, res, body),
};

/** The answerers `/mcp` uses, in order. */
export const ANSWERERS: readonly McpAnswerer[] = [fastCall, sdkTransport];
