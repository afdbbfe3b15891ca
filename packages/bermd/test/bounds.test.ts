// What a client can make bermd hold, bounded: MCP sessions (--max-sessions) and connections that send
// their requests a byte at a time (--headers-timeout, --request-timeout), against real bermd processes
// over raw sockets and HTTP.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { connect, deploy, type McpConnection } from './mcp-client.js';
import { INITIALIZE, MCP_HEADERS, MCP_PROTOCOL, rawRequest, type RawAnswer } from './raw-http.js';

/** Starts a session over raw POSTs (initialize, then initialized) and answers its id, or the answer refusing it. */
async function tryInitialize(base: string): Promise<string | RawAnswer> {
  const res = await rawRequest(base, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: INITIALIZE });
  const id = res.headers['mcp-session-id'];
  if (res.status !== 200 || typeof id !== 'string') return res;
  const initialized = await rawRequest(base, {
    method: 'POST',
    path: '/mcp',
    headers: { ...MCP_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': MCP_PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  // 404: at the cap, another client's initialize let this session go as soon as it was idle.
  expect([202, 404]).toContain(initialized.status);
  return id;
}

/** Starts a session over raw POSTs (initialize, then initialized) and answers its id. */
async function initialize(base: string): Promise<string> {
  const started = await tryInitialize(base);
  if (typeof started !== 'string') throw new Error(`initialize answered ${started.status}: ${started.body}`);
  return started;
}

/** What bermd answers an `initialize` with at its session cap of `cap`, all in use. */
function sessionCapAnswer(cap: number) {
  return {
    jsonrpc: '2.0',
    error: {
      code: -32000,
      message: `bermd is at its cap of ${cap} MCP sessions, all in use (--max-sessions); try again when one ends`,
      data: { code: 'session-cap' },
    },
    id: null,
  };
}

/** The status a `tools/list` on session `id` is answered with. */
async function listStatus(base: string, id: string): Promise<number> {
  const res = await rawRequest(base, {
    method: 'POST',
    path: '/mcp',
    headers: { ...MCP_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': MCP_PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
  });
  return res.status;
}

/**
 * Opens session `id`'s stream of server messages and resolves once its headers arrive (the stream is
 * open), or with the status it was refused with (its connection closed).
 */
function tryStream(base: string, id: string): Promise<http.ClientRequest | number> {
  const url = new URL('/mcp', base);
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': MCP_PROTOCOL },
        agent: false,
      },
      (res) => {
        res.on('error', () => {});
        if (res.statusCode === 200) return resolve(req);
        req.destroy();
        resolve(res.statusCode!);
      },
    );
    req.on('error', () => {});
    req.end();
  });
}

/** Opens session `id`'s stream of server messages and resolves once its headers arrive (the stream is open). */
async function openStream(base: string, id: string): Promise<http.ClientRequest> {
  const stream = await tryStream(base, id);
  if (typeof stream === 'number') throw new Error(`GET /mcp answered ${stream}`);
  return stream;
}

/** A bermd started with `args` for the block's tests, and an SDK client of it, which keeps its stream open. */
function daemonWithClient(args: string[]): { d: RunningDaemon; client: McpConnection } {
  const held = {} as { d: RunningDaemon; client: McpConnection };
  beforeAll(async () => {
    // At debug level bermd logs each session's stream as it opens.
    held.d = await startDaemon({ args: [...args, '--log-level', 'debug'] });
    held.client = await connect(held.d.url);
    // The SDK's client opens its stream after connect() has answered: the tests start once it is open.
    const session = held.client.transport.sessionId;
    await held.d.waitForLog((e) => e.msg === 'mcp notification stream opened' && e.session === session);
  });
  afterAll(async () => {
    await held.client.close();
    await held.d.stop();
    await removeDir(held.d.stateDir);
  });
  return held;
}

describe('--max-sessions and --mcp-max-body', () => {
  // The client keeps its stream open, as the SDK's does: never the one let go.
  const held = daemonWithClient(['--max-sessions', '3', '--mcp-max-body', '2K']);

  it('refuses a /mcp body over its bound (413), and nothing starts', async () => {
    const { d } = held;
    const body = JSON.stringify({ ...JSON.parse(INITIALIZE), pad: 'x'.repeat(2048) });
    const res = await rawRequest(d.url, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body });
    expect(res.status).toBe(413);
    expect(res.headers['mcp-session-id']).toBeUndefined();
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: -32600, message: 'the request body is larger than 2048 bytes' } });
  });

  it('closes the least recently used idle session to make room, and refuses when every session is in use', async () => {
    const { d, client } = held;
    const older = await initialize(d.url);
    const newer = await initialize(d.url);
    // newer was used last; older has been idle longest.
    expect(await listStatus(d.url, newer)).toBe(200);
    const fourth = await initialize(d.url);
    expect(await listStatus(d.url, older)).toBe(404);
    expect(await listStatus(d.url, newer)).toBe(200);
    expect(await listStatus(d.url, fourth)).toBe(200);
    await d.waitForLog((e) => e.session === older && String(e.msg).includes('at the session cap'));

    // With every session's stream open, there is nothing to let go: a new session is refused.
    const streams = [await openStream(d.url, newer), await openStream(d.url, fourth)];
    try {
      const refused = await rawRequest(d.url, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: INITIALIZE });
      expect(refused.status).toBe(503);
      expect(refused.headers['mcp-session-id']).toBeUndefined();
      expect(JSON.parse(refused.body)).toEqual(sessionCapAnswer(3));
      // Everyone holding a session is still served.
      expect(await listStatus(d.url, newer)).toBe(200);
      expect((await client.client.listTools()).tools).toEqual([]);

      // A session that ends makes room.
      const ended = await rawRequest(d.url, {
        method: 'DELETE',
        path: '/mcp',
        headers: { 'mcp-session-id': fourth, 'mcp-protocol-version': MCP_PROTOCOL },
      });
      expect(ended.status).toBe(200);
      const again = await initialize(d.url);
      expect(await listStatus(d.url, again)).toBe(200);
      expect(await listStatus(d.url, newer)).toBe(200);
    } finally {
      for (const stream of streams) stream.destroy();
    }
  });
});

describe('--max-sessions under a burst of initialize requests', () => {
  it('never holds more sessions than its cap: each initialize is counted from when it is accepted, the others are refused 503 session-cap', async () => {
    const cap = 5;
    const d = await startDaemon({ args: ['--max-sessions', String(cap), '--log-level', 'debug'] });
    const streams: http.ClientRequest[] = [];
    /** A client as the SDK's: its session started, then its stream opened; it answers its session's id, or the refusal. */
    const client = async (): Promise<string | RawAnswer> => {
      const started = await tryInitialize(d.url);
      if (typeof started !== 'string') return started;
      const stream = await tryStream(d.url, started);
      // 404: let go while idle, before its stream opened, to make room for another.
      if (typeof stream === 'number') expect(stream).toBe(404);
      else streams.push(stream);
      return started;
    };
    try {
      const burst = await Promise.all(Array.from({ length: 300 }, client));
      const accepted = burst.filter((b) => typeof b === 'string');
      for (const refused of burst.filter((b) => typeof b !== 'string')) {
        expect(refused.status).toBe(503);
        expect(JSON.parse(refused.body)).toEqual(sessionCapAnswer(cap));
      }
      expect(accepted.length).toBeGreaterThan(0);

      // Then one client after another until one is refused: each holds its stream open, so none can be let go.
      let refusal: RawAnswer | undefined;
      for (let i = 0; i <= cap && refusal === undefined; i++) {
        const started = await client();
        if (typeof started === 'string') accepted.push(started);
        else refusal = started;
      }
      expect(refusal?.status).toBe(503);
      expect(JSON.parse(refusal!.body)).toEqual(sessionCapAnswer(cap));

      // What bermd holds: exactly the cap's worth of sessions, each with its stream open; every other one is gone.
      const statuses = await Promise.all(accepted.map((id) => listStatus(d.url, id)));
      expect(statuses.filter((s) => s === 200)).toHaveLength(cap);
      expect(statuses.filter((s) => s !== 200).every((s) => s === 404)).toBe(true);
      expect(streams).toHaveLength(cap);

      // And at no moment more: each session's opening is logged with the count held then.
      const opened = (e: Record<string, unknown>): boolean => e.msg === 'mcp session opened';
      await d.waitForLog(() => d.log().filter(opened).length >= accepted.length);
      const held = d
        .log()
        .filter(opened)
        .map((e) => e.held);
      expect(held).toHaveLength(accepted.length);
      expect(held.every((n) => typeof n === 'number' && n >= 1 && n <= cap)).toBe(true);
    } finally {
      for (const stream of streams) stream.destroy();
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});

/** A raw connection to `port`, with what the server sent and whether the server ended it. */
function socketTo(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  let endedByServer = false;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('end', () => (endedByServer = true));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, closed, received: () => received, endedByServer: () => endedByServer };
}

/**
 * Writes `text` one byte per `everyMs` until it is answered or the socket closes (it never ends it itself).
 * A byte written after the server has closed would be answered with a reset, which can reach the socket
 * before it has read the server's end, and the test would see a reset where the server ended cleanly.
 * Each byte is written after the event loop's turn has read what arrived (a timer runs before the turn's
 * I/O, an immediate after it), so an answer already received stops the byte that would follow it.
 */
function trickle(socket: net.Socket, text: string, everyMs = 100): void {
  let at = 0;
  let answered = false;
  const timer = setInterval(() => {
    setImmediate(() => {
      if (answered || socket.destroyed) return;
      socket.write(text[at++ % text.length]!);
    });
  }, everyMs);
  const stop = () => {
    answered = true;
    clearInterval(timer);
  };
  socket.once('data', stop);
  socket.once('close', stop);
}

describe('--headers-timeout and --request-timeout', () => {
  const held = daemonWithClient(['--headers-timeout', '1s', '--request-timeout', '2s']);

  it('cuts a client that sends its headers a byte at a time, or nothing at all', async () => {
    const { d } = held;
    const slow = socketTo(d.port);
    trickle(slow.socket, `GET /harnesses HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(10_000)}`);
    const idle = socketTo(d.port);
    await Promise.all([slow.closed, idle.closed]);
    for (const s of [slow, idle]) {
      expect(s.endedByServer()).toBe(true);
      expect(s.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    }
    // Everyone else is served throughout.
    expect((await fetch(`${d.url}/harnesses`)).status).toBe(200);
  });

  it('cuts a deploy whose body comes a byte at a time, and nothing is deployed', async () => {
    const { d } = held;
    const slow = socketTo(d.port);
    slow.socket.write(
      'PUT /harnesses/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/wasm\r\nContent-Length: 100000\r\n\r\n',
    );
    trickle(slow.socket, '\0asm');
    await slow.closed;
    expect(slow.endedByServer()).toBe(true);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect((await fetch(`${d.url}/harnesses/slow`)).status).toBe(404);
  });

  it('never cuts an answer that takes longer than a request may: a session stream outlives both timeouts', async () => {
    const { d, client } = held;
    // The stream opened with the connection; a slow client opened after it is cut after the timeouts.
    const slow = socketTo(d.port);
    slow.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n');
    trickle(slow.socket, '{');
    await slow.closed;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    const told = client.toolsChanged.next();
    await deploy(d.url, 'late', await harnessImage(manifestWithTools(['echo'])));
    await told;
    expect((await client.client.listTools()).tools.map((t) => t.name)).toEqual(['late.echo']);
  });
});
