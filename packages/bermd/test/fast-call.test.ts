// The fast path's answer to a call that takes its time: the SDK's transport sends its headers at once
// and an SSE comment every keep-alive interval, so neither a client waiting on headers nor a proxy
// closing idle connections takes a long call for a dead server. The fast path must do no less.
// A real HTTP server on loopback answers through answerFastCall; the tool's outcome is a promise the
// test resolves, and the clock is vitest's fake one, so nothing here waits on time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ToolCatalog, type McpCore } from '../dist/mcp/index.js';
import { answerFastCall, FAST_HEADERS_AFTER_MS, type FastCallSession, SSE_KEEP_ALIVE_MS } from '../dist/mcp/fast-call.js';
import type { CallOutcome } from '../dist/runtime/index.js';
import { sampleManifest } from '../../../test/helpers/harness.js';

describe('answerFastCall on a long call', () => {
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
    logger: pino({ level: 'silent' }),
    version: '0.0.0',
    broadcastEvent: () => {},
  };
  const session: FastCallSession = { id: 'session-1', state: {}, calls: new Map() };
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    server = http.createServer((_req, res) => void answerFastCall(core, session, { id: 1, name: 'slow.echo', args: { query: 'q' } }, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends its headers while the call runs, then a keep-alive comment each interval, then the answer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const running = new Promise<void>((resolve) => (started = resolve));
    const chunks: string[] = [];
    let chunkArrived: () => void = () => {};
    let ended: () => void = () => {};
    const done = new Promise<void>((resolve) => (ended = resolve));
    const response = new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp' }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          chunks.push(chunk);
          chunkArrived();
        });
        res.on('end', () => ended());
        resolve(res);
      });
      req.on('error', reject);
      req.end('{}');
    });
    const nextChunk = (): Promise<void> => new Promise((resolve) => (chunkArrived = resolve));

    await running;
    vi.advanceTimersByTime(FAST_HEADERS_AFTER_MS);
    const res = await response;
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ 'content-type': 'text/event-stream', 'mcp-session-id': 'session-1', 'x-accel-buffering': 'no' });
    expect(chunks).toEqual([]);

    const first = nextChunk();
    vi.advanceTimersByTime(SSE_KEEP_ALIVE_MS);
    await first;
    expect(chunks).toEqual([': keepalive\n\n']);

    finish({ ok: { query: 'q' }, reached: { tools: [], events: [] } });
    await done;
    expect(chunks.join('')).toBe(
      ': keepalive\n\n' +
        'event: message\ndata: {"result":{"content":[{"type":"text","text":"{\\"query\\":\\"q\\"}"}],"structuredContent":{"query":"q"}},"jsonrpc":"2.0","id":1}\n\n',
    );
    // Nothing is left armed once the call has answered.
    expect(vi.getTimerCount()).toBe(0);
  });
});
