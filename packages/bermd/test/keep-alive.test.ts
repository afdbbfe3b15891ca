// Every SSE stream bermd serves is kept alive by the same comment at the same interval
// (src/app/keep-alive.ts): `GET /events`, and `/mcp`'s streams, written by the SDK's transports.
// A daemon made with a short interval (an option of createDaemon, not a flag), listening on loopback,
// is read over real HTTP until the comment arrives on each stream; nothing waits on the clock.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDaemon, type Daemon, DEFAULT_LIMITS, DEFAULT_MAX_CALL_DEPTH } from 'bermd';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEEP_ALIVE_COMMENT } from '../dist/app/index.js';
import { removeDir, tempDir } from './daemon.js';

const ACCEPT = 'application/json, text/event-stream';

interface Stream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Resolves with everything read once the text read so far contains `text`. */
  until(text: string): Promise<string>;
  close(): void;
}

/** Opens `path` and reads its answer as it comes. */
function open(port: number, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      const waiting = new Set<() => void>();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (const check of [...waiting]) check();
      });
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        until: (wanted) =>
          new Promise((found, failed) => {
            const check = (): void => {
              if (!text.includes(wanted)) return;
              waiting.delete(check);
              found(text);
            };
            res.once('end', () => failed(new Error(`the stream ended without ${JSON.stringify(wanted)}: ${JSON.stringify(text)}`)));
            waiting.add(check);
            check();
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('the SSE keep-alive, one interval for every stream', () => {
  let daemon: Daemon;
  let port: number;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await tempDir();
    daemon = await createDaemon(
      {
        stateDir,
        maxImageSize: 1024 * 1024,
        token: undefined,
        limits: DEFAULT_LIMITS,
        maxCallDepth: DEFAULT_MAX_CALL_DEPTH,
        toolSeparator: '.',
        keepAliveMs: 20,
      },
      pino({ level: 'silent' }),
    );
    await daemon.app.listen({ host: '127.0.0.1', port: 0 });
    port = (daemon.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await daemon?.close();
    await removeDir(stateDir);
  });

  it('arrives on GET /events after its opening comment', async () => {
    const events = await open(port, 'GET', '/events', {});
    try {
      expect(events.status).toBe(200);
      expect(await events.until(KEEP_ALIVE_COMMENT)).toMatch(/^: subscribed\n\n(: keepalive\n\n)+$/);
    } finally {
      events.close();
    }
  });

  it("arrives on a 2025 MCP session's stream, which the SDK's transport writes", async () => {
    const init = await open(
      port,
      'POST',
      '/mcp',
      { 'content-type': 'application/json', accept: ACCEPT },
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'keep-alive', version: '0' } },
      },
    );
    expect(init.status).toBe(200);
    await init.until('"result"');
    const session = String(init.headers['mcp-session-id']);
    const initialized = await open(
      port,
      'POST',
      '/mcp',
      { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': session },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    );
    expect(initialized.status).toBe(202);
    const stream = await open(port, 'GET', '/mcp', { accept: 'text/event-stream', 'mcp-session-id': session });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toBe('text/event-stream');
      expect(await stream.until(KEEP_ALIVE_COMMENT)).toContain(KEEP_ALIVE_COMMENT);
    } finally {
      stream.close();
    }
  });
});
