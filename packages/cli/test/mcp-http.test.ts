// `berm mcp`'s transport to bermd (mcp-http/transport.ts) held to what it replaces, the MCP SDK's
// StreamableHTTPClientTransport configured as the relay configured it: the same messages go through each
// to a recording server that answers as bermd does (JSON, Server-Sent Events cut into pieces, a held
// stream, 202s, a 401, a 403 for a scope, a 400 carrying a JSON-RPC error, a page of a 500), in both
// generations, and the test compares what the server received (method, path, every header but those
// fetch adds of its own, body), which requests were closed by the client, what each transport handed
// on, the streams it said had ended, and what each threw. Every wait is for a request, a message or a
// close; nothing sleeps.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { McpHttpTransport } from '../dist/mcp-http/transport.js';

type Message = Record<string, unknown>;

/** Headers fetch sends of its own accord, which say nothing of MCP. */
const FETCH_OWN = new Set(['host', 'connection', 'user-agent', 'accept-encoding', 'accept-language', 'sec-fetch-mode', 'keep-alive']);

/** Whether a header is fetch's own: one of those, or the `Accept: *\/*` it adds where none is given (the DELETE). */
function fetchOwn(name: string, value: string): boolean {
  return FETCH_OWN.has(name) || (name === 'accept' && value === '*/*');
}

interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Whether the client closed it before its answer ended (a held stream it let go). */
  closedByClient: boolean;
}

const MODERN = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';

/** Writes `text` as Server-Sent Events in pieces, each flushed on its own (a chunk boundary anywhere). */
function writePieces(res: http.ServerResponse, text: string): void {
  for (let at = 0; at < text.length; at += 7) res.write(text.slice(at, at + 7));
}

function event(message: Message, end = '\n'): string {
  return `event: message${end}id: e${String(message.id ?? 'n')}${end}data: ${JSON.stringify(message)}${end}${end}`;
}

/** A server answering as bermd does, keyed on what each request asks; it records every request. */
class Recorder {
  readonly received: Received[] = [];
  private server!: http.Server;
  private readonly waiters: Array<{ match: (r: Received[]) => boolean; resolve: () => void }> = [];
  /** Tokens the server refuses with a 401. */
  readonly refused = new Set<string>(['stale', 'refused-again']);
  url!: URL;

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => this.answer(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = new URL(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Resolves once the requests received satisfy `match`. */
  until(match: (r: Received[]) => boolean): Promise<void> {
    if (match(this.received)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  private changed(): void {
    for (const w of [...this.waiters])
      if (w.match(this.received)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (!fetchOwn(name, String(value))) headers[name] = String(value);
      const record: Received = { method: req.method!, path: req.url!, headers, body, closedByClient: false };
      this.received.push(record);
      res.on('close', () => {
        if (!res.writableFinished) {
          record.closedByClient = true;
          this.changed();
        }
      });
      this.route(record, res);
      this.changed();
    });
  }

  private route(record: Received, res: http.ServerResponse): void {
    const token = record.headers.authorization?.replace(/^Bearer /, '');
    if (token !== undefined && this.refused.has(token)) {
      res
        .writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' })
        .end('{"error":"invalid_token"}');
      return;
    }
    if (record.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': the session stream\n\n');
      res.write(event({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
      return; // held open
    }
    if (record.method === 'DELETE') {
      res.writeHead(200).end();
      return;
    }
    const message = JSON.parse(record.body) as { id?: number | string; method?: string; params?: Record<string, unknown> };
    const id = message.id;
    const reply = (result: unknown): Message => ({ jsonrpc: '2.0', id, result });
    const version = (message.params?._meta as Record<string, unknown> | undefined)?.[META_VERSION];
    if (id === undefined || message.method === undefined) {
      res.writeHead(202).end();
      return;
    }
    const name = message.params?.name;
    switch (message.method) {
      case 'initialize':
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-one' }).end(
          JSON.stringify(
            reply({
              protocolVersion: '2025-11-25',
              capabilities: { tools: { listChanged: true } },
              serverInfo: { name: 'bermd', version: '0' },
            }),
          ),
        );
        return;
      case 'tools/list': {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
        const text =
          event({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'é' } }, '\r\n') +
          ': a comment\r\n\r\n' +
          event({ jsonrpc: '2.0', method: 'not/a message', id: null }, '\r\n') +
          event(reply({ tools: [{ name: 'basic.echo', inputSchema: { type: 'object' } }] }), '\r\n');
        writePieces(res, text);
        res.end();
        return;
      }
      case 'subscriptions/listen':
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          event({
            jsonrpc: '2.0',
            method: 'notifications/subscriptions/acknowledged',
            params: { _meta: { 'io.modelcontextprotocol/subscriptionId': id } },
          }),
        );
        // A listen asked to end is ended as bermd ends one when it stops: its result, then the stream's end.
        if ((message.params?.notifications as Record<string, unknown> | undefined)?.ending === true) res.end(event(reply({})));
        return; // else held open
      case 'resources/read':
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply({ contents: [] })));
        return;
      case 'tools/call':
        if (version !== undefined && version !== MODERN) {
          res.writeHead(400, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              jsonrpc: '2.0',
              id,
              error: { code: -32602, message: 'Unsupported protocol version', data: { supported: [MODERN] } },
            }),
          );
          return;
        }
        if (name === 'basic.scoped') {
          res
            .writeHead(403, {
              'content-type': 'application/json',
              'www-authenticate': 'Bearer error="insufficient_scope", scope="berm:read berm:call:basic", error_description="lacks it"',
            })
            .end(
              JSON.stringify({
                jsonrpc: '2.0',
                id,
                error: { code: -32000, message: 'may not', data: { code: 'insufficient-scope', scope: 'berm:call:basic' } },
              }),
            );
          return;
        }
        if (name === 'basic.gone') {
          // What bermd answers a session it no longer knows.
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
          return;
        }
        if (name === 'basic.page') {
          res.writeHead(500, { 'content-type': 'text/html' }).end('<html>proxy error</html>');
          return;
        }
        if (name === 'basic.spin') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(event({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }));
          return; // held open until the client closes it
        }
        if (version === MODERN) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          writePieces(
            res,
            event({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'debug', logger: 'basic', data: {} } }),
          );
          res.end(event(reply({ content: [{ type: 'text', text: 'ok' }] })));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply({ content: [{ type: 'text', text: 'ok' }] })));
        return;
      default:
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply({})));
    }
  }
}

/** What both transports are to the relay. */
interface Link {
  start(): Promise<void>;
  send(message: Message, options?: { requestSignal?: AbortSignal; onRequestStreamEnd?: () => void }): Promise<void>;
  readonly sessionId?: string;
  setProtocolVersion(version: string): void;
  terminateSession(): Promise<void>;
  close(): Promise<void>;
  onmessage?: (message: Message) => void;
}

/** A token source that gives `first`, then `next` once told of a 401, and gives up after that. */
function tokens(first: string, next: string) {
  let current = first;
  let told = 0;
  return {
    token: async () => current,
    onUnauthorized: async () => {
      told++;
      if (told > 1) throw Object.assign(new Error('no better token'), { givenUp: true });
      current = next;
    },
    set(token: string) {
      current = token;
    },
  };
}

/** What a failure thrown by either transport says that the relay reads: the status, the scope refused, the body. */
function failure(e: unknown): Record<string, unknown> {
  if ((e as { givenUp?: boolean }).givenUp) return { givenUp: true };
  if (e instanceof Error && e.name === 'McpHttpError') {
    const { status, refusedScope, body } = e as unknown as { status?: number; refusedScope?: string; body?: string };
    return { status, scope: refusedScope, body: refusedScope === undefined && status !== 401 ? body : undefined };
  }
  const sdk = e as { constructor: { name: string }; requiredScope?: string; data?: { status?: number; text?: string } };
  if (sdk.constructor.name === 'InsufficientScopeError') return { status: 403, scope: sdk.requiredScope };
  return { status: sdk.data?.status, scope: undefined, body: sdk.data?.status === 401 ? undefined : sdk.data?.text };
}

interface Run {
  received: Array<Omit<Received, 'headers'> & { headers: Record<string, string> }>;
  messages: Message[];
  failures: Record<string, unknown>[];
  streamsEnded: string[];
  sessionAfterDelete?: string;
}

/** The messages a transport handed on, and a wait for one. */
class Inbox {
  readonly messages: Message[] = [];
  private readonly waiters: Array<{ match: (m: Message) => boolean; resolve: () => void }> = [];

  push(message: Message): void {
    this.messages.push(message);
    for (const w of [...this.waiters])
      if (w.match(message)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
  }

  /** Resolves once a message `match` accepts has come (already, or later). */
  arrival(match: (m: Message) => boolean): Promise<void> {
    if (this.messages.some(match)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}

const init = (id: number): Message => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

/** A 2026-07-28 request's `_meta`, as a client of that generation writes it. */
function envelope(extra: Record<string, unknown> = {}, version = MODERN): Record<string, unknown> {
  return {
    [META_VERSION]: version,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': {},
    ...extra,
  };
}

/**
 * What both exchanges start from: a recording server, the link `make` gives toward it with tokens that
 * give `first` then `next`, and where what comes back is kept: the messages passed on, the failures of
 * sends (`attempt`), the streams ended.
 */
async function openRun(make: (url: URL, t: ReturnType<typeof tokens>) => Link, first: string, next: string) {
  const server = new Recorder();
  await server.start();
  const t = tokens(first, next);
  const link = make(server.url, t);
  const inbox = new Inbox();
  const failures: Record<string, unknown>[] = [];
  const streamsEnded: string[] = [];
  link.onmessage = (m) => inbox.push(m);
  const arrival = (match: (m: Message) => boolean): Promise<void> => inbox.arrival(match);
  const attempt = async (message: Message, options?: Parameters<Link['send']>[1]): Promise<void> => {
    await link.send(message, options).catch((e: unknown) => failures.push(failure(e)));
  };
  return { server, t, link, messages: inbox.messages, arrival, failures, streamsEnded, attempt };
}

/** The 2025-11-25 exchange: a session opened after a 401, its stream, a list, calls, a cancellation, refusals, its end. */
async function sessionRun(make: (url: URL, t: ReturnType<typeof tokens>) => Link): Promise<Run> {
  const { server, link, messages, arrival, failures, streamsEnded, attempt } = await openRun(make, 'stale', 'fresh');
  try {
    await link.start();
    await attempt(init(1));
    link.setProtocolVersion('2025-11-25');
    await attempt({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // The session's stream opens on its own once initialized, and says the list changed.
    await server.until((r) => r.some((x) => x.method === 'GET'));
    await arrival((m) => m.method === 'notifications/tools/list_changed');
    await attempt({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { onRequestStreamEnd: () => streamsEnded.push('list') });
    await arrival((m) => m.id === 2);
    await attempt({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'basic.echo', arguments: { x: 1 } } });
    await attempt({ jsonrpc: '2.0', id: 4, method: 'logging/setLevel', params: { level: 'notice' } });
    const spin = new AbortController();
    await attempt(
      { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'basic.spin', arguments: {}, _meta: { progressToken: 1 } } },
      { requestSignal: spin.signal, onRequestStreamEnd: () => streamsEnded.push('spin') },
    );
    await arrival((m) => m.method === 'notifications/progress');
    // 2025's cancellation is a notification on the session; the relay closes nothing itself there.
    await attempt({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'enough' } });
    await attempt({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'basic.scoped', arguments: {} } });
    await attempt({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'basic.page', arguments: {} } });
    await attempt({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'basic.gone', arguments: {} } });
    // An initialize on a transport that holds a session is sent without it.
    await attempt(init(9));
    // A client's answer to the server, and an error it sends, go through as notifications do.
    await attempt({ jsonrpc: '2.0', id: 'server-1', result: { action: 'accept' } });
    await attempt({ jsonrpc: '2.0', id: 'server-2', error: { code: -1, message: 'no' } });
    await link.terminateSession();
    const sessionAfterDelete = link.sessionId;
    spin.abort();
    await server.until((r) => r.find((x) => x.body.includes('basic.spin'))?.closedByClient === true);
    await link.close();
    await server.until((r) => r.find((x) => x.method === 'GET')?.closedByClient === true);
    return { received: server.received, messages, failures, streamsEnded, sessionAfterDelete };
  } finally {
    await server.stop();
  }
}

/** The 2026-07-28 exchange: requests standing alone, their headers from their `_meta`, listens, a cancellation by closing, refusals. */
async function statelessRun(make: (url: URL, t: ReturnType<typeof tokens>) => Link): Promise<Run> {
  const { server, t, link, messages, arrival, failures, streamsEnded, attempt } = await openRun(make, 'fresh', 'refused-again');
  try {
    await link.start();
    await attempt({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } });
    await attempt(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'basic.echo', arguments: { y: 2 }, _meta: envelope({ 'io.modelcontextprotocol/logLevel': 'debug' }) },
      },
      { onRequestStreamEnd: () => streamsEnded.push('call') },
    );
    await arrival((m) => m.id === 2);
    // Names Mcp-Name carries as they are, and those it carries in Base64.
    for (const [id, name] of [
      [3, 'relay.été'],
      [4, ' padded'],
      [5, '=?base64?abc?='],
    ] as const)
      await attempt({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: envelope() } });
    await attempt({ jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri: 'berm://basic/usage', _meta: envelope() } });
    await attempt({ jsonrpc: '2.0', id: 7, method: 'prompts/get', params: { name: 'basic.hello', _meta: envelope() } });
    const listen = new AbortController();
    await attempt(
      { jsonrpc: '2.0', id: 8, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: envelope() } },
      { requestSignal: listen.signal, onRequestStreamEnd: () => streamsEnded.push('listen') },
    );
    await arrival((m) => m.method === 'notifications/subscriptions/acknowledged');
    // The client cancels its listen: the request is closed.
    listen.abort();
    await server.until((r) => r.find((x) => x.body.includes('"id":8'))?.closedByClient === true);
    await attempt(
      { jsonrpc: '2.0', id: 9, method: 'subscriptions/listen', params: { notifications: { ending: true }, _meta: envelope() } },
      { onRequestStreamEnd: () => streamsEnded.push('ended listen') },
    );
    await arrival((m) => m.id === 9);
    const spin = new AbortController();
    await attempt(
      { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'basic.spin', arguments: {}, _meta: envelope() } },
      { requestSignal: spin.signal, onRequestStreamEnd: () => streamsEnded.push('spin') },
    );
    await arrival((m) => m.method === 'notifications/progress');
    spin.abort();
    await server.until((r) => r.find((x) => x.body.includes('"id":10'))?.closedByClient === true);
    // A version bermd does not serve is refused with a JSON-RPC error in a 400: that is the answer.
    await attempt({
      jsonrpc: '2.0',
      id: 11,
      method: 'tools/call',
      params: { name: 'basic.echo', arguments: {}, _meta: envelope({}, '2099-01-01') },
    });
    await attempt({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'basic.scoped', arguments: {}, _meta: envelope() } });
    // A token refused, renewed, and the renewed one refused too; then one the source gives up on.
    t.set('stale');
    await attempt({ jsonrpc: '2.0', id: 13, method: 'tools/list', params: { _meta: envelope() } });
    await attempt({ jsonrpc: '2.0', id: 14, method: 'tools/list', params: { _meta: envelope() } });
    // No session to end: nothing is sent.
    await link.terminateSession();
    await link.close();
    return { received: server.received, messages, failures, streamsEnded };
  } finally {
    await server.stop();
  }
}

const sdk = (url: URL, t: ReturnType<typeof tokens>): Link =>
  new StreamableHTTPClientTransport(url, {
    authProvider: t,
    onInsufficientScope: 'throw',
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 0, maxReconnectionDelay: 0, reconnectionDelayGrowFactor: 1 },
  }) as unknown as Link;
const ours = (url: URL, t: ReturnType<typeof tokens>): Link => new McpHttpTransport(url, t) as unknown as Link;

describe("berm mcp's transport to bermd, beside the SDK's", () => {
  let runs: Record<'sdk' | 'ours', { session: Run; stateless: Run }>;

  beforeAll(async () => {
    runs = {
      sdk: { session: await sessionRun(sdk), stateless: await statelessRun(sdk) },
      ours: { session: await sessionRun(ours), stateless: await statelessRun(ours) },
    };
  });

  for (const generation of ['session', 'stateless'] as const) {
    describe(generation === 'session' ? '2025-11-25, in a session' : '2026-07-28, each request alone', () => {
      it('sends the same requests: method, path, headers and body, and closes the same ones', () => {
        const { sdk: theirs, ours: mine } = { sdk: runs.sdk[generation], ours: runs.ours[generation] };
        expect(mine.received).toEqual(theirs.received);
        // The exchange is what it is meant to be: the headers each generation asks for are there.
        expect(theirs.received.length).toBeGreaterThan(10);
      });

      it('hands on the same messages, says the same streams ended, and throws the same failures', () => {
        const { sdk: theirs, ours: mine } = { sdk: runs.sdk[generation], ours: runs.ours[generation] };
        expect(mine.messages).toEqual(theirs.messages);
        expect(mine.streamsEnded).toEqual(theirs.streamsEnded);
        expect(mine.failures).toEqual(theirs.failures);
        expect(mine.sessionAfterDelete).toEqual(theirs.sessionAfterDelete);
      });
    });
  }

  it('covers what the relay relies on', () => {
    const { session, stateless } = runs.ours;
    const methods = session.received.map((r) => `${r.method} ${r.headers.authorization ?? ''}`);
    // The 401, then the same initialize with the renewed token.
    expect(methods.slice(0, 2)).toEqual(['POST Bearer stale', 'POST Bearer fresh']);
    expect(session.received.find((r) => r.method === 'GET')?.headers).toMatchObject({
      'mcp-session-id': 'session-one',
      accept: 'text/event-stream',
    });
    expect(session.received.at(-1)).toMatchObject({
      method: 'DELETE',
      headers: { 'mcp-session-id': 'session-one', 'mcp-protocol-version': '2025-11-25' },
    });
    expect(session.failures).toEqual([
      { status: 403, scope: 'berm:read berm:call:basic', body: undefined },
      { status: 500, scope: undefined, body: '<html>proxy error</html>' },
      { status: 404, scope: undefined, body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}' },
    ]);
    expect(session.received.filter((r) => r.body.includes('"initialize"')).map((r) => r.headers['mcp-session-id'])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(stateless.received.find((r) => r.body.includes('relay.été'))?.headers['mcp-name']).toBe(
      `=?base64?${Buffer.from('relay.été').toString('base64')}?=`,
    );
    expect(stateless.received.every((r) => r.headers['mcp-session-id'] === undefined)).toBe(true);
    expect(stateless.messages.find((m) => m.id === 11)).toMatchObject({ error: { message: 'Unsupported protocol version' } });
    expect(stateless.failures.slice(1)).toEqual([{ status: 401, scope: undefined, body: undefined }, { givenUp: true }]);
    expect(stateless.streamsEnded).toEqual(['call', 'ended listen']);
  });
});
