/**
 * `berm mcp`'s link to bermd's `/mcp`: MCP's Streamable HTTP transport, client side, in the shape of the
 * MCP SDK's `StreamableHTTPClientTransport` as the relay (mcp-bridge.ts) used it, for both generations:
 *
 * - every message a POST, with the headers its generation asks for: `Accept`, `Content-Type`, the
 *   session's `Mcp-Session-Id` (none on `initialize`, whose answer names it), the `MCP-Protocol-Version`
 *   the handshake settled, and those a 2026-07-28 request derives from its `_meta` (headers.ts);
 * - an answer as JSON or as Server-Sent Events, each message handed to `onmessage`; a request's stream
 *   stays open after `send` returns, and `onRequestStreamEnd` says when it ends;
 * - once a 2025 session is initialized, its GET stream of server messages; `onsessionstreamend` says
 *   when bermd ends it;
 * - the bearer token asked of `tokens` before each request, and on a 401 `onUnauthorized` then the
 *   request once more; a 403 naming `insufficient_scope` thrown with its scope and body, never
 *   re-authorized (a login with more scopes is the user's to ask for);
 * - a request's signal closing its request (how a 2026-07-28 request is cancelled), `close` all of them.
 *
 * Written here rather than taken from the SDK: `berm mcp` is started by its client, which waits on that
 * start before its first answer, and the SDK's client package, the only home of its transport, loads zod
 * and the whole SDK with it, which took longer than everything else the relay does before it answers.
 * `test/mcp-http.test.ts` sends the same messages through both transports to a recording server and
 * compares what it receives. Left out, as the relay asked for none of it: resuming a stream from its last
 * event id, reconnecting a dropped stream (the relay reconnects itself, to a new session when bermd
 * restarted), OAuth flows run by the transport, and following redirects (a redirect is reported with
 * where it points).
 */
import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { isJSONRPCErrorResponse, isJSONRPCMessage, isJSONRPCNotification, isJSONRPCRequest, type JSONRPCMessage } from '../json-rpc.js';
import { McpHttpError } from './errors.js';
import { challengeOf, GET_ACCEPT, isStatelessVersion, mediaType, messageHeaders, POST_ACCEPT } from './headers.js';
import { SseReader } from './sse.js';

/** Where the bearer token comes from: asked before each request, and told of a 401 (throwing when there is nothing better). */
export interface TransportTokens {
  token(): Promise<string | undefined>;
  onUnauthorized?(): Promise<void>;
}

export interface SendOptions {
  /** Aborting it closes the request, and its stream if one is open. */
  requestSignal?: AbortSignal;
  /** Once the request's stream ends, other than by the signal or `close`. */
  onRequestStreamEnd?: () => void;
}

type HttpModule = Pick<typeof import('node:http'), 'request' | 'Agent'>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export class McpHttpTransport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  /** The 2025 session's GET stream ended, other than by `close`: bermd ended it, or went away. */
  onsessionstreamend?: () => void;
  private session?: string;
  private protocolVersion?: string;
  private controller?: AbortController;
  private http?: HttpModule;
  private agent?: Agent;

  constructor(
    private readonly endpoint: URL,
    private readonly tokens?: TransportTokens,
  ) {}

  /** The session bermd opened on `initialize` (2025); undefined without one (2026-07-28). */
  get sessionId(): string | undefined {
    return this.session;
  }

  async start(): Promise<void> {
    if (this.controller !== undefined) throw new Error('the transport to bermd is already started');
    this.controller = new AbortController();
    this.http = this.endpoint.protocol === 'https:' ? await import('node:https') : await import('node:http');
    // Requests in a row share a connection, as fetch's would.
    this.agent = new this.http.Agent({ keepAlive: true });
  }

  /** The version the handshake settled, sent on every later request of the session. */
  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  /** Sends `message`; resolves once it is answered, or its answer's stream is open. Throws what went wrong (McpHttpError). */
  async send(message: JSONRPCMessage, options: SendOptions = {}): Promise<void> {
    try {
      await this.post(message, options, false);
    } catch (e) {
      if (options.requestSignal?.aborted !== true) this.onerror?.(e as Error);
      throw e;
    }
  }

  /** Ends the session on bermd (a DELETE), when there is one; a server that does not end sessions (405) is let be. */
  async terminateSession(): Promise<void> {
    if (this.session === undefined) return;
    try {
      const signal = this.started().signal;
      const res = await this.request('DELETE', await this.commonHeaders(), undefined, signal);
      const status = res.statusCode ?? 0;
      const body = await readBody(res, signal);
      if (!ok(status) && status !== 405) throw refused(status, body, 'could not end its session');
      this.session = undefined;
    } catch (e) {
      this.onerror?.(e as Error);
      throw e;
    }
  }

  /** Closes every request and stream, and the connections. */
  async close(): Promise<void> {
    this.controller?.abort();
    this.agent?.destroy();
  }

  private started(): AbortController {
    if (this.controller === undefined) throw new Error('the transport to bermd is not started');
    return this.controller;
  }

  private async commonHeaders(): Promise<OutgoingHttpHeaders> {
    const headers: OutgoingHttpHeaders = {};
    const token = await this.tokens?.token();
    if (token) headers.authorization = `Bearer ${token}`;
    if (this.session) headers['mcp-session-id'] = this.session;
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    return headers;
  }

  private async post(message: JSONRPCMessage, options: SendOptions, retried: boolean): Promise<void> {
    const transport = this.started().signal;
    const signal = options.requestSignal === undefined ? transport : AbortSignal.any([transport, options.requestSignal]);
    const headers = { ...(await this.commonHeaders()), ...messageHeaders(message) };
    const handshake = isJSONRPCRequest(message) && message.method === 'initialize';
    if (handshake) delete headers['mcp-session-id'];
    const body = JSON.stringify(message);
    headers['content-type'] = 'application/json';
    headers.accept = POST_ACCEPT;
    headers['content-length'] = Buffer.byteLength(body);
    const res = await this.request('POST', headers, body, signal);
    const status = res.statusCode ?? 0;
    if (handshake && ok(status)) this.session = header(res, 'mcp-session-id') || undefined;
    if (!ok(status)) {
      if (status === 401 && this.tokens !== undefined) {
        res.resume();
        if (this.tokens.onUnauthorized !== undefined && !retried) {
          await this.tokens.onUnauthorized();
          return this.post(message, options, true);
        }
        throw new McpHttpError(retried ? 'refused the token again after it was renewed (401)' : 'refused the token (401)', { status });
      }
      const text = await readBody(res, signal);
      const refusal = scopeRefused(res, text);
      if (refusal !== undefined) throw refusal;
      if (status === 400 && isJSONRPCRequest(message) && isStateless(message)) {
        // A 2026-07-28 request refused before it is served (an unsupported version) is answered with a
        // JSON-RPC error in the 400's body: that error is the request's answer.
        const answer = parsed(text);
        if (isJSONRPCErrorResponse(answer) && answer.id === message.id) {
          this.onmessage?.(answer);
          return;
        }
      }
      throw refused(status, text, 'answered', res);
    }
    if (status === 202 || !isJSONRPCRequest(message)) {
      res.resume();
      // The session is initialized: its stream of server messages may open.
      if (status === 202 && isJSONRPCNotification(message) && message.method === 'notifications/initialized')
        void this.openSessionStream(false);
      return;
    }
    const type = mediaType(header(res, 'content-type'));
    if (type === 'text/event-stream') {
      this.readStream(res, signal, options.onRequestStreamEnd);
      return;
    }
    if (type !== 'application/json') {
      res.resume();
      throw new McpHttpError(
        `answered ${status} with ${header(res, 'content-type') || 'no content type'}, not JSON or Server-Sent Events`,
        {
          status,
        },
      );
    }
    const text = await readBody(res, signal);
    const answer = parsed(text);
    const messages: unknown[] = Array.isArray(answer) ? answer : [answer];
    if (!messages.every(isJSONRPCMessage)) throw new McpHttpError(text, { status, body: text });
    for (const m of messages) this.onmessage?.(m as JSONRPCMessage);
  }

  /** Opens the session's GET stream; what goes wrong is reported, not thrown (no one waits on it). */
  private async openSessionStream(retried: boolean): Promise<void> {
    const signal = this.started().signal;
    try {
      const headers = await this.commonHeaders();
      headers.accept = GET_ACCEPT;
      const res = await this.request('GET', headers, undefined, signal);
      const status = res.statusCode ?? 0;
      if (!ok(status)) {
        if (status === 401 && this.tokens !== undefined) {
          res.resume();
          if (this.tokens.onUnauthorized !== undefined && !retried) {
            await this.tokens.onUnauthorized();
            return this.openSessionStream(true);
          }
          throw new McpHttpError('refused the token (401) for the session stream', { status });
        }
        const text = await readBody(res, signal);
        const refusal = scopeRefused(res, text);
        if (refusal !== undefined) throw refusal;
        // A server that sends no stream of its own says so.
        if (status === 405) return;
        throw refused(status, text, 'did not open the session stream', res);
      }
      this.readStream(res, signal, () => this.onsessionstreamend?.());
    } catch (e) {
      if (!signal.aborted) this.onerror?.(e as Error);
    }
  }

  /** Reads the Server-Sent Events of `res`, handing on each message; `ended` once the stream ends other than by `signal`. */
  private readStream(res: IncomingMessage, signal: AbortSignal, ended?: () => void): void {
    const reader = new SseReader(({ event, data }) => {
      if (data === '' || (event !== undefined && event !== 'message')) return;
      let message: unknown;
      try {
        message = JSON.parse(data);
      } catch (e) {
        this.onerror?.(e as Error);
        return;
      }
      if (isJSONRPCMessage(message)) this.onmessage?.(message);
      else this.onerror?.(new McpHttpError(`sent an event that is not a JSON-RPC message: ${data}`, { body: data }));
    });
    let finished = false;
    const finish = (cut?: Error): void => {
      if (finished) return;
      finished = true;
      // Closed on purpose (a cancellation, or the end): nothing to say, and no end to report.
      if (signal.aborted) return;
      if (cut !== undefined) this.onerror?.(new McpHttpError(`the stream was cut short (${codeOf(cut)})`, { cause: cut }));
      ended?.();
    };
    res.on('data', (chunk: Buffer) => reader.write(chunk));
    res.on('end', () => finish());
    res.on('error', (e) => finish(e));
    res.on('close', () => {
      if (!res.complete) finish(Object.assign(new Error('the connection closed mid-answer'), { code: 'ECONNRESET' }));
    });
  }

  /** One request, resolved with its answer once its headers are in; the socket's error thrown as an McpHttpError without a status. */
  private request(method: string, headers: OutgoingHttpHeaders, body: string | undefined, signal: AbortSignal): Promise<IncomingMessage> {
    const http = this.http!;
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      let req: ClientRequest;
      try {
        req = http.request(this.endpoint, { method, headers, agent: this.agent, signal }, resolve);
      } catch (e) {
        // A header the message asks for that HTTP cannot carry (a control character in its method).
        reject(new McpHttpError(codeOf(e as Error), { cause: e }));
        return;
      }
      req.on('error', (e) => reject(signal.aborted ? signal.reason : new McpHttpError(codeOf(e), { cause: e })));
      req.end(body);
    });
  }
}

function ok(status: number): boolean {
  return status >= 200 && status < 300;
}

function header(res: IncomingMessage, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function codeOf(e: Error): string {
  return (e as NodeJS.ErrnoException).code ?? e.message;
}

/** Whether `message` names a 2026-07-28 version in its `_meta`. */
function isStateless(message: JSONRPCMessage): boolean {
  const version = messageHeaders(message)['mcp-protocol-version'];
  return version !== undefined && isStatelessVersion(version);
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A 403 whose challenge says `insufficient_scope`, as the error that carries its scope and body. */
function scopeRefused(res: IncomingMessage, body: string): McpHttpError | undefined {
  if (res.statusCode !== 403) return undefined;
  const { error, scope } = challengeOf(header(res, 'www-authenticate'));
  if (error !== 'insufficient_scope') return undefined;
  return new McpHttpError(`refused for a scope (403 insufficient_scope${scope ? `, asking for ${scope}` : ''})`, {
    status: 403,
    body,
    refusedScope: scope ?? '',
  });
}

/** An answer that is no success, as an error; a redirect says where it points, since it is not followed. */
function refused(status: number, body: string, doing: string, res?: IncomingMessage): McpHttpError {
  const location = res !== undefined && REDIRECTS.has(status) ? header(res, 'location') : undefined;
  const said = location === undefined ? body : `a redirect to ${location}, not followed: use that address if it is bermd's`;
  return new McpHttpError(`${doing} ${status}${said === '' ? '' : `: ${said}`}`, { status, body: location === undefined ? body : said });
}

/** The whole body of `res`, as text. */
function readBody(res: IncomingMessage, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    const cut = (e: Error): void => reject(signal.aborted ? signal.reason : new McpHttpError(codeOf(e), { cause: e }));
    res.on('error', cut);
    res.on('close', () => {
      if (!res.complete) cut(Object.assign(new Error('the connection closed mid-answer'), { code: 'ECONNRESET' }));
    });
  });
}
