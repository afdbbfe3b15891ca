/**
 * `berm mcp`: an MCP server on stdio that relays to a bermd's `/mcp`, so a client that starts local
 * servers (Claude Desktop and others) can use every harness. Toward bermd, MCP's Streamable HTTP transport
 * (mcp-http/transport.ts), which derives every header either protocol generation asks for from the message
 * it sends; toward the client, lines on stdin and stdout (mcp-stdin.ts, mcp-stdio.ts). The relay
 * reads messages only as far as it must, so whatever generation the client speaks goes through:
 *
 * - 2025-11-25 and older: the client's `initialize` opens a session on bermd, whose stream of server
 *   messages (list changes, other sessions' events) is relayed to stdout;
 * - 2026-07-28: every request goes through as it is; a `subscriptions/listen` stream is relayed for as
 *   long as the client keeps it; a `notifications/cancelled` closes the request it names (on HTTP,
 *   that is how a 2026-07-28 request is cancelled).
 *
 * When bermd cannot be reached, each request is answered at once with an error saying so, and the
 * relay keeps trying in the background: once bermd answers again, a 2025 session is opened anew with
 * the client's own `initialize` (and log level), a dropped listen is sent again, and the client is told
 * the lists changed, since it may have missed a deploy. stdout carries the protocol only; what the
 * relay has to say goes to `log` (stderr). Whatever answers at the address is no more trusted than an
 * image: what the relay quotes of it (an answer's body) is made printable.
 */
import { pipeline, type Readable, type Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { daemonUrl } from '@berm/client';
import { backoff } from '@berm/protocol';
import { printable } from '@berm/format/printable';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  META,
  type RequestId,
} from './json-rpc.js';
import { answeredError, describe, refusedScope, statusOf } from './mcp-failure.js';
import { McpHttpTransport } from './mcp-http/transport.js';
import { deferred, type Handshake, type Link, OwnRequests, type SessionReplay } from './mcp-state.js';
import { JsonRpcLines } from './mcp-stdin.js';
import { StdioLink } from './mcp-stdio.js';

/**
 * The bearer token the relay sends, as its transport asks for it: `token` before every request, and `onUnauthorized` once bermd answers 401, after which the request is sent again with
 * what `token` gives then, so that a refreshed token keeps the client's session. `onUnauthorized` throws
 * when there is nothing better to send, and the request is answered with `unauthorized`'s advice.
 */
export interface BridgeTokens {
  token(): Promise<string | undefined>;
  onUnauthorized(): Promise<void>;
  /** What the client is told when bermd at `where` refuses the token: what to do about it. */
  unauthorized(where: string): string;
  /** What to add when bermd refuses a request for `scope`, which the token lacks: how to get it, when the relay knows. */
  lacking?(scope: string): string | undefined;
}

export interface BridgeOptions {
  /** bermd's MCP endpoint, `http://127.0.0.1:7477/mcp`. */
  endpoint: URL;
  /** Sent as `Authorization: Bearer <token>`; none by default. */
  tokens?: BridgeTokens;
  stdin?: Readable;
  stdout?: Writable;
  /** Where the relay says what happens to it, one line at a time (stderr). */
  log(line: string): void;
  /** The first and the longest wait between attempts to reach bermd again. */
  retryMs?: { first: number; max: number };
}

/** JSON-RPC's "server error" range: what a client gets while bermd cannot be reached. */
export const UNREACHABLE_CODE = -32000;

/** bermd's own code for what it refuses on /mcp (a 403 for a scope), in the same range. */
const REFUSED_CODE = -32000;

const DEFAULT_RETRY = { first: 250, max: 5000 };

export class McpBridge {
  private readonly options: BridgeOptions;
  private readonly retry: { first: number; max: number };
  private readonly down: StdioLink;
  /** stdin less the lines that are not JSON-RPC, which it answers itself: what `down` reads. */
  private readonly lines: JsonRpcLines;
  /** The transport to bermd: a new session's replaces it (reopenSession). */
  private up: McpHttpTransport;
  private link: Link = 'reachable';
  /** The client's 2025 session (none for a 2026-07-28 client). */
  private readonly session: SessionReplay = { initializedNotified: false };
  private handshake?: Handshake;
  /** The client's `subscriptions/listen` requests whose streams it still holds (2026-07-28). */
  private readonly listens = new Map<RequestId, JSONRPCRequest>();
  /** Listens sent again: their second acknowledgement is the relay's, not the client's. */
  private readonly relistened = new Set<RequestId>();
  /** Requests under way, so that a cancellation or the end can stop them. */
  private readonly inflight = new Map<RequestId, AbortController>();
  private readonly own = new OwnRequests();
  /** The attempt under way to restore what the client had on bermd, which concurrent callers share. */
  private reconnecting?: Promise<boolean>;
  /** Whether the loop that repeats the attempts until one succeeds runs. */
  private retrying = false;
  private readonly ended = deferred();
  /** Resolves once the client has gone (stdin closed) and the relay has let go of bermd. */
  readonly done: Promise<void> = this.ended.promise;

  constructor(options: BridgeOptions) {
    this.options = options;
    this.retry = options.retryMs ?? DEFAULT_RETRY;
    this.lines = new JsonRpcLines((answer) => {
      this.options.log(`stdin: a line that is not a JSON-RPC message, answered ${answer.error.code}`);
      void this.toClient(answer);
    });
    this.down = new StdioLink(this.lines, options.stdout ?? process.stdout);
    this.up = this.upstream();
  }

  private get closed(): boolean {
    return this.link === 'closed';
  }

  async start(): Promise<void> {
    await this.up.start();
    this.down.onmessage = (message) => void this.fromClient(message);
    this.down.onerror = (e) => {
      // The link closes itself on an error of stdout; the relay then ends, as when stdin closes.
      if ((e as NodeJS.ErrnoException).code === 'EPIPE') this.options.log('stdout is closed: the client has gone; ending');
      else this.options.log(`stdio: ${e.message}`);
    };
    this.down.onclose = () => void this.close();
    this.down.start();
    // Errors reach the transport through `lines`, which pipeline destroys with them.
    pipeline(this.options.stdin ?? process.stdin, this.lines, () => {});
    this.options.log(`relaying MCP on stdio to ${this.options.endpoint.href}`);
  }

  /** A transport to bermd, its messages and failures the relay's to handle. */
  private upstream(): McpHttpTransport {
    const up = new McpHttpTransport(this.options.endpoint, this.options.tokens);
    up.onmessage = (message) => this.fromDaemon(message);
    up.onerror = (e) => {
      if (!this.closed) this.options.log(`bermd: ${describe(e)}`);
    };
    // The session's stream ended (bermd stopped, or dropped it): the relay reconnects on its own.
    up.onsessionstreamend = () => this.lost('the session stream ended');
    return up;
  }

  private async fromClient(message: JSONRPCMessage): Promise<void> {
    if (isJSONRPCRequest(message) && message.method === 'initialize') {
      const { promise, resolve } = deferred();
      this.handshake = { request: message, answered: promise, end: resolve };
      return this.send(message, true);
    }
    await this.handshake?.answered;
    if (isJSONRPCRequest(message)) {
      if (message.method === 'logging/setLevel') this.session.logLevel = message;
      else if (message.method === 'subscriptions/listen') this.listens.set(message.id, message);
    } else if (isJSONRPCNotification(message)) {
      if (message.method === 'notifications/initialized') this.session.initializedNotified = true;
      if (message.method === 'notifications/cancelled') {
        const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        if (id !== undefined) {
          this.listens.delete(id);
          // 2026-07-28 over HTTP has no client notifications: closing the request is its cancellation.
          if (this.up.sessionId === undefined) {
            this.inflight.get(id)?.abort();
            return;
          }
        }
      }
    }
    await this.send(message, true);
  }

  /** Sends one of the client's messages to bermd; a request that cannot be sent is answered with why. */
  private async send(message: JSONRPCMessage, mayReconnect: boolean): Promise<void> {
    const request = isJSONRPCRequest(message) ? message : undefined;
    const controller = new AbortController();
    if (request !== undefined) this.inflight.set(request.id, controller);
    try {
      await this.up.send(message, {
        requestSignal: controller.signal,
        onRequestStreamEnd: request?.method === 'subscriptions/listen' ? () => this.listenEnded(request.id) : undefined,
      });
      this.nowReachable();
    } catch (e) {
      if (request?.method === 'initialize') this.endHandshake();
      if (controller.signal.aborted || this.closed) return;
      if (request !== undefined) {
        this.inflight.delete(request.id);
        // The client is told its listen failed: it holds no stream to restore.
        this.listens.delete(request.id);
      }
      const status = statusOf(e);
      // bermd no longer knows the session (it restarted, or let an idle one go): a new one, then this message again.
      if (status === 404 && mayReconnect && this.session.accepted !== undefined && request?.method !== 'initialize') {
        this.options.log('bermd no longer knows the session; opening a new one');
        if (await this.reconnect()) return this.send(message, false);
      }
      if (status === undefined) this.lost(`it is not reachable (${describe(e)})`);
      if (request !== undefined) await this.answerError(request, status, e);
    }
  }

  /**
   * Answers a request the relay could not send. bermd's own JSON-RPC error (a 503 `session-cap`) is the
   * answer, as bermd gave it, and so is its 403 for a scope the token lacks, with how to get the scope
   * where the token source knows (a stored login); otherwise the relay says what happened. A client may
   * show the message.
   */
  private async answerError(request: JSONRPCRequest, status: number | undefined, e: unknown): Promise<void> {
    const where = this.options.endpoint.href;
    const scope = refusedScope(e);
    const said = status === undefined || status === 401 ? undefined : answeredError(e);
    const lacking = scope === undefined ? undefined : (said?.data as { scope?: unknown } | undefined)?.scope;
    const advice = scope === undefined ? undefined : this.options.tokens?.lacking?.(typeof lacking === 'string' ? lacking : scope);
    if (said !== undefined) {
      const message = advice === undefined ? said.message : `${said.message}; ${advice}`;
      await this.toClient({ jsonrpc: '2.0', id: request.id, error: { ...said, message: printable(message) } });
      return;
    }
    if (scope !== undefined) {
      const message = `bermd at ${where} refused ${request.method} (403 insufficient_scope): ${advice ?? `set BERM_TOKEN to a token holding ${scope}`}`;
      await this.toClient({ jsonrpc: '2.0', id: request.id, error: { code: REFUSED_CODE, message: printable(message) } });
      return;
    }
    const message =
      status === undefined
        ? `bermd is not reachable at ${where} (${describe(e)}); berm mcp keeps trying, and the request can be sent again`
        : status === 401
          ? (this.options.tokens?.unauthorized(where) ?? `bermd at ${where} asks for a token (401): set BERM_TOKEN, or run berm login`)
          : `bermd at ${where} ${describe(e)}`;
    await this.toClient({ jsonrpc: '2.0', id: request.id, error: { code: UNREACHABLE_CODE, message: printable(message) } });
  }

  private fromDaemon(message: JSONRPCMessage): void {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const id = message.id as RequestId;
      if (this.own.settle(id, message)) return;
      this.inflight.delete(id);
      if (this.listens.has(id)) {
        // bermd ended a listen the client still holds (it is stopping): for the client the relay is the
        // server, and its subscription goes on once bermd is back.
        if (isJSONRPCResultResponse(message)) {
          this.lost('it ended a listen stream');
          return;
        }
        this.listens.delete(id);
      }
      if (id === this.handshake?.request.id) {
        if (isJSONRPCResultResponse(message)) {
          this.session.accepted = this.handshake.request;
          this.up.setProtocolVersion((message.result as { protocolVersion: string }).protocolVersion);
        }
        this.endHandshake();
      }
    } else if (isJSONRPCNotification(message) && message.method === 'notifications/subscriptions/acknowledged') {
      const id = (message.params?._meta as Record<string, unknown> | undefined)?.[META.subscriptionId] as RequestId | undefined;
      if (id !== undefined && this.relistened.delete(id)) {
        // The client has its acknowledgement; what it needs now is to know it may have missed changes.
        void this.listChanged(this.listens.get(id));
        return;
      }
    }
    void this.toClient(message);
  }

  private async toClient(message: JSONRPCMessage): Promise<void> {
    await this.down.send(message).catch((e: unknown) => {
      // Once the client has gone, what could not reach it has nowhere to go.
      if (!this.closed) this.options.log(`stdout: ${describe(e)}`);
    });
  }

  /** Tells the client the lists may have changed: on its session, or on the listen stream that asked. */
  private async listChanged(listen?: JSONRPCRequest): Promise<void> {
    if (listen === undefined) {
      await this.toClient({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      await this.toClient({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
      return;
    }
    const wanted = (listen.params as { notifications?: Record<string, unknown> } | undefined)?.notifications ?? {};
    const params = { _meta: { [META.subscriptionId]: listen.id } };
    if (wanted.toolsListChanged === true) await this.toClient({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params });
    if (wanted.resourcesListChanged === true)
      await this.toClient({ jsonrpc: '2.0', method: 'notifications/resources/list_changed', params });
  }

  /** The client's `initialize` is answered, or was not sent: what waits on it goes on. */
  private endHandshake(): void {
    const ending = this.handshake;
    this.handshake = undefined;
    ending?.end();
  }

  private listenEnded(id: RequestId): void {
    this.inflight.delete(id);
    // Neither answered (a graceful end) nor cancelled by the client: bermd went away under it.
    if (!this.closed && this.listens.has(id)) this.lost('a listen stream ended');
  }

  private nowReachable(): void {
    if (this.link !== 'lost') return;
    this.link = 'reachable';
    this.options.log(`bermd answers again at ${this.options.endpoint.href}`);
  }

  /** bermd went away: say so once, and keep trying to restore what the client had there (a session, listen streams). */
  private lost(why: string): void {
    if (this.closed) return;
    const restorable = this.session.accepted !== undefined || this.listens.size > 0;
    if (this.link === 'reachable') this.options.log(`lost bermd at ${this.options.endpoint.href}: ${why}${restorable ? '; retrying' : ''}`);
    this.link = 'lost';
    if (restorable) void this.keepTrying();
  }

  private async keepTrying(): Promise<void> {
    if (this.retrying || this.closed) return;
    this.retrying = true;
    try {
      for (let attempt = 0; !this.closed && !(await this.reconnect()); attempt++) {
        await sleep(backoff(attempt, { firstMs: this.retry.first, maxMs: this.retry.max }), undefined, { ref: false });
      }
    } finally {
      this.retrying = false;
    }
  }

  /** One attempt to restore what the client had on bermd; concurrent callers share it. */
  private reconnect(): Promise<boolean> {
    this.reconnecting ??= this.restore().finally(() => (this.reconnecting = undefined));
    return this.reconnecting;
  }

  private async restore(): Promise<boolean> {
    try {
      if (this.session.accepted !== undefined) await this.reopenSession(this.session.accepted);
      for (const listen of this.listens.values()) {
        this.relistened.add(listen.id);
        // Tracked as the client's own request was, so that its cancellation still closes the stream.
        const controller = new AbortController();
        this.inflight.set(listen.id, controller);
        await this.up.send(listen, { requestSignal: controller.signal, onRequestStreamEnd: () => this.listenEnded(listen.id) });
      }
      this.nowReachable();
      if (this.session.accepted !== undefined) await this.listChanged();
      return true;
    } catch (e) {
      if (!this.closed) this.options.log(`bermd is still not reachable at ${this.options.endpoint.href} (${describe(e)})`);
      for (const id of this.listens.keys()) this.relistened.delete(id);
      return false;
    }
  }

  /** A new 2025 session with the client's own `initialize`, `initialized` and log level; its answers are the relay's. */
  private async reopenSession(initialize: JSONRPCRequest): Promise<void> {
    const next = this.upstream();
    await next.start();
    try {
      const answer = await this.own.ask(next, initialize);
      if (!isJSONRPCResultResponse(answer)) throw new Error(`bermd refused the session: ${JSON.stringify(answer)}`);
      next.setProtocolVersion((answer.result as { protocolVersion: string }).protocolVersion);
      if (this.session.initializedNotified) await next.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      if (this.session.logLevel !== undefined) await this.own.ask(next, this.session.logLevel);
    } catch (e) {
      await next.close();
      throw e;
    }
    const old = this.up;
    this.up = next;
    // The old session ends now, its stream with it: the relay has moved on.
    old.onerror = undefined;
    old.onsessionstreamend = undefined;
    // The old session, if bermd still has it (a stream that dropped while bermd stayed up), is ended.
    await old.terminateSession().catch(() => {});
    await old.close().catch(() => {});
  }

  /** The client went away: stop what is under way, end the session on bermd, and let go. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.link = 'closed';
    for (const call of this.inflight.values()) call.abort();
    // stdin may still be open (the client closed stdout): it is read no more.
    this.lines.destroy();
    if (this.up.sessionId !== undefined) await this.up.terminateSession().catch(() => {});
    await this.up.close().catch(() => {});
    this.ended.resolve();
  }
}

/** bermd's MCP endpoint from a daemon address: `/mcp` under it, unless the address already names it. Throws `bad-url`. */
export function mcpEndpoint(daemon: string): URL {
  const url = daemonUrl(daemon);
  if (!url.pathname.replace(/\/+$/, '').endsWith('/mcp')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/mcp`;
  return url;
}

/** Relays this process's stdin and stdout to the bermd at `daemon` until stdin closes; diagnostics go to stderr. */
export async function runBridge(daemon: string, tokens: BridgeTokens): Promise<string> {
  const endpoint = mcpEndpoint(daemon);
  // Every line is made printable here, in one place: most quote what answered at the address.
  const bridge = new McpBridge({ endpoint, tokens, log: (line) => process.stderr.write(`berm mcp: ${printable(line)}\n`) });
  await bridge.start();
  await bridge.done;
  return endpoint.href;
}
