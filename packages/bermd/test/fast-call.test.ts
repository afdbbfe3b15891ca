// A call that takes its time on a 2025 session: the SDK's transport sends its headers at once and an SSE
// comment every keep-alive interval, so neither a client waiting on headers nor a proxy closing idle
// connections takes a long call for a dead server. The fast path must do no less. `/mcp` is served by a
// real HTTP server on loopback (the app and the endpoint bermd builds), both ways: with the fast path,
// and with it off (every request through the SDK), each answering the same. The tool's outcome is a
// promise the test resolves, and the clock is vitest's fake one, so nothing here waits on time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../dist/app/index.js';
import { createMcpEndpoint, type McpCore, type McpEndpoint, McpSessions, StatelessMcp, ToolCatalog } from '../dist/mcp/index.js';
import { SSE_KEEP_ALIVE_MS } from '../dist/app/index.js';
import { FAST_HEADERS_AFTER_MS } from '../dist/mcp/fast-call.js';
import type { CallOutcome } from '../dist/runtime/index.js';
import { sampleManifest } from '../../../test/helpers/harness.js';

const ACCEPT = 'application/json, text/event-stream';

interface Answer {
  res: http.IncomingMessage;
  chunks: string[];
  /** Resolves when one more chunk than now has arrived. */
  nextChunk(): Promise<void>;
  ended: Promise<void>;
}

/** POSTs `body` to `/mcp` and hands back the response as it arrives. */
function send(port: number, headers: Record<string, string>, body: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp', headers }, (res) => {
      const chunks: string[] = [];
      let arrived: () => void = () => {};
      let ended: () => void = () => {};
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        chunks.push(chunk);
        arrived();
      });
      const done = new Promise<void>((r) => (ended = r));
      res.on('end', () => ended());
      resolve({ res, chunks, ended: done, nextChunk: () => new Promise((r) => (arrived = r)) });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function textOf(answer: Answer): Promise<string> {
  await answer.ended;
  return answer.chunks.join('');
}

describe.each([
  { way: 'on the fast path', fastPath: true, via: 'fast-path' },
  { way: 'with --mcp-fast-path false', fastPath: false, via: 'transport' },
])('a long tools/call on a 2025 session, $way', ({ fastPath, via }) => {
  // The core's log, which says which path answered each call.
  const lines: Array<Record<string, unknown>> = [];
  const catalog = new ToolCatalog('.');
  catalog.set(catalog.prepare('slow', sampleManifest()));
  let finish: (outcome: CallOutcome) => void = () => {};
  let started: () => void = () => {};
  const core: McpCore = {
    catalog,
    call: () => {
      started();
      return new Promise<CallOutcome>((resolve) => (finish = resolve));
    },
    recordUse: () => {},
    logger: pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }),
    version: '0.0.0',
    broadcastEvent: () => {},
  };
  let app: FastifyInstance;
  let endpoint: McpEndpoint;
  let port: number;
  let session: Record<string, string>;

  beforeAll(async () => {
    const logger = pino({ level: 'silent' });
    app = buildApp({ logger, bodyLimit: 1024 * 1024 });
    endpoint = createMcpEndpoint({ sessions: new McpSessions(core), stateless: new StatelessMcp(core), fastPath });
    await app.register(endpoint.plugin);
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
    const init = await send(
      port,
      { 'content-type': 'application/json', accept: ACCEPT },
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'long', version: '0' } },
      },
    );
    await init.ended;
    expect(init.res.statusCode).toBe(200);
    session = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': String(init.res.headers['mcp-session-id']) };
    const initialized = await send(port, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
    await initialized.ended;
    expect(initialized.res.statusCode).toBe(202);
  });
  afterAll(async () => {
    await endpoint?.close();
    await app?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends its headers while the call runs, then a keep-alive comment each interval, then the answer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const running = new Promise<void>((resolve) => (started = resolve));
    const answering = send(port, session, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'slow.echo', arguments: { query: 'q' } },
    });

    await running;
    vi.advanceTimersByTime(FAST_HEADERS_AFTER_MS);
    const answer = await answering;
    expect(answer.res.statusCode).toBe(200);
    expect(answer.res.headers).toMatchObject({
      'content-type': 'text/event-stream',
      'mcp-session-id': session['mcp-session-id'],
      'x-accel-buffering': 'no',
    });
    expect(answer.chunks).toEqual([]);

    const first = answer.nextChunk();
    vi.advanceTimersByTime(SSE_KEEP_ALIVE_MS);
    await first;
    expect(answer.chunks).toEqual([': keepalive\n\n']);

    finish({ ok: { query: 'q' }, reached: { tools: [], events: [] } });
    const text = await textOf(answer);
    expect(text.startsWith(': keepalive\n\nevent: message\ndata: ')).toBe(true);
    expect(text.endsWith('\n\n')).toBe(true);
    // JSON's key order is no part of what a client reads.
    expect(JSON.parse(text.slice(': keepalive\n\nevent: message\ndata: '.length, -2))).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: '{"query":"q"}' }], structuredContent: { query: 'q' } },
    });
    expect(lines.filter((l) => l.msg === 'tools/call finished')).toEqual([expect.objectContaining({ rpc_id: 1, via })]);
    // Nothing the answer armed is left once it is sent.
    expect(vi.getTimerCount()).toBe(0);
  });
});
