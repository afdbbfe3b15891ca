// GET /events (the deployed set's changes as Server-Sent Events) and the dry run
// (PUT /harnesses/{name}?dry-run=true), against a real bermd. A dry run announces nothing: the
// tests deploy for real after it and check that the stream's first event is that deploy.
import { once } from 'node:events';
import { readdir, writeFile } from 'node:fs/promises';
import { get as getHttp, Agent as HttpAgent, type ClientRequest, type IncomingMessage } from 'node:http';
import { connect as connectTcp } from 'node:net';
import path from 'node:path';
import type { HarnessChange } from '@berm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { readSse } from '../../ui/web/src/sse.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, put } from './mcp-client.js';

/** Opens `/events` on the process's shared fetch pool and hands back its changes one at a time. */
async function follow(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/events`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const messages = readSse(res.body!);
  return {
    // Held so the response lives as long as its stream: undici cancels the body of a response it collects.
    response: res,
    async next(): Promise<{ event: string; data: HarnessChange }> {
      const { value, done } = await messages.next();
      if (done) throw new Error('the stream ended');
      return { event: value.event, data: JSON.parse(value.data) as HarnessChange };
    },
    /** Resolves once the stream has ended. */
    async ended(): Promise<void> {
      const { done } = await messages.next();
      expect(done).toBe(true);
    },
    /** Leaves the stream as a page does: its body cancelled, its connection left to the pool. */
    close: async (): Promise<void> => {
      await messages.return(undefined);
    },
  };
}

/** The tool names `/mcp` lists, asked by the SDK's client on a session of its own. */
async function listedTools(url: string): Promise<string[]> {
  const c = await connect(url);
  try {
    return (await c.client.listTools()).tools.map((t) => t.name);
  } finally {
    await c.close();
  }
}

describe('GET /events, and the dry run that announces nothing', () => {
  let d: RunningDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d.stop();
    await removeDir(d.stateDir);
  });

  it('streams every deploy and undeploy, made by anyone, in order', async () => {
    const a = await follow(d.url);
    const b = await follow(d.url);
    const image = await harnessImage();
    expect((await put(`${d.url}/harnesses/one`, image)).status).toBe(201);
    expect((await put(`${d.url}/harnesses/one`, image)).status).toBe(200);
    expect((await fetch(`${d.url}/harnesses/one`, { method: 'DELETE' })).status).toBe(204);
    for (const stream of [a, b]) {
      expect(await stream.next()).toEqual({ event: 'deployed', data: { type: 'deployed', name: 'one', replaced: false } });
      expect(await stream.next()).toEqual({ event: 'deployed', data: { type: 'deployed', name: 'one', replaced: true } });
      expect(await stream.next()).toEqual({ event: 'undeployed', data: { type: 'undeployed', name: 'one' } });
      await stream.close();
    }
  });

  it('a dry run (PUT /harnesses/{name}?dry-run=true) answers what the deploy would (201 or 200, with the manifest), and stores, serves and announces nothing', async () => {
    const changes = await follow(d.url);
    try {
      const v1 = await harnessImage(manifestWithTools(['echo', 'size']));
      let res = await put(`${d.url}/harnesses/h?dry-run=true`, v1);
      expect(res.status).toBe(201);
      const dry = (await res.json()) as Record<string, unknown>;
      expect(dry).toMatchObject({ name: 'h', version: '0.1.0', tools: ['echo', 'size'], reported: [], notices: [], dry_run: true });
      expect((dry.manifest as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['echo', 'size']);
      expect((await fetch(`${d.url}/harnesses/h`)).status).toBe(404);
      // Only h's files and tools are looked at: what another test deployed is not this test's business.
      expect((await readdir(path.join(d.stateDir, 'harnesses'))).filter((f) => f.startsWith('h.'))).toEqual([]);
      expect((await listedTools(d.url)).filter((t) => t.startsWith('h.'))).toEqual([]);

      // A real deploy, then a dry run of a replacement that drops a tool nobody used.
      expect((await put(`${d.url}/harnesses/h`, v1)).status).toBe(201);
      const v2 = await harnessImage(manifestWithTools(['echo'], { version: '0.2.0' }));
      res = await put(`${d.url}/harnesses/h?dry-run=true&timeout=2s`, v2);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        version: '0.2.0',
        dry_run: true,
        reported: [{ code: 'tool-removed', tool: 'size', used: false }],
      });
      const held = (await (await fetch(`${d.url}/harnesses/h`)).json()) as Record<string, unknown>;
      expect(held).toMatchObject({ version: '0.1.0', tools: ['echo', 'size'], bindings: {} });
      expect((await listedTools(d.url)).filter((t) => t.startsWith('h.'))).toEqual(['h.echo', 'h.size']);

      // The stream's first event is the real deploy: neither dry run was announced.
      expect(await changes.next()).toEqual({ event: 'deployed', data: { type: 'deployed', name: 'h', replaced: false } });
    } finally {
      await changes.close();
    }
  });

  it('a dry run is refused as the deploy would be, with the same status and body', async () => {
    const broken = await harnessImage(manifestWithTools(['a', 'b']), { omit: ['berm_tool_b'] });
    const dry = await put(`${d.url}/harnesses/x?dry-run=true`, broken);
    const real = await put(`${d.url}/harnesses/x`, broken);
    expect([dry.status, real.status]).toEqual([422, 422]);
    expect(await dry.json()).toEqual(await real.json());
    const bad = await put(`${d.url}/harnesses/x?dry-run=maybe`, await harnessImage());
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'bad-request',
      message: expect.stringContaining('dry-run=maybe'),
    });
  });
});

describe('GET /events with --token-file', () => {
  it('needs the token like every route, and ends when the daemon stops', async () => {
    const dir = await tempDir('bermd-events-token-');
    await writeFile(path.join(dir, 'token'), 'tok\n');
    const d = await startDaemon({ args: ['--token-file', path.join(dir, 'token')] });
    try {
      expect((await fetch(`${d.url}/events`)).status).toBe(401);
      const stream = await follow(d.url, { authorization: 'Bearer tok' });
      expect((await put(`${d.url}/harnesses/t`, await harnessImage(), { authorization: 'Bearer tok' })).status).toBe(201);
      expect((await stream.next()).data).toEqual({ type: 'deployed', name: 't', replaced: false });
      // A stream never ends by itself; stopping the daemon ends it, and the daemon exits.
      const stopped = d.stop();
      await stream.ended();
      expect(await stopped).toBe(0);
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
      await removeDir(dir);
    }
  });
});

describe('a stopping bermd and the connections its clients hold open', () => {
  it('exits without waiting on a connection that never sent a request, nor on one whose stream the stop ended', async () => {
    const d = await startDaemon();
    const pool = new HttpAgent({ keepAlive: true });
    try {
      // What undici's pool leaves behind once a stream is cancelled: a connection it opened and sent nothing on.
      const silent = connectTcp(d.port, '127.0.0.1');
      await once(silent, 'connect');
      const silentClosed = once(silent, 'close');
      // A stream on a keep-alive connection: the stop ends it, and the client keeps the connection for its next request.
      const stream = await new Promise<IncomingMessage>((resolve, reject) => {
        getHttp(`${d.url}/events`, { agent: pool }, resolve).on('error', reject);
      });
      expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      // Answered on a connection made after the silent one, so bermd has accepted that one too.
      await once(stream, 'data');
      const ended = once(stream.resume(), 'end');

      // Both would keep the daemon from exiting: Node's server closes only connections idle between two requests.
      expect(await d.stop()).toBe(0);
      await ended;
      await silentClosed;
    } finally {
      pool.destroy();
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});

/**
 * Opens `/events` on a connection of its own; resolves once the stream's first line has arrived (bermd
 * counts it open by then). `change()` resolves with the next change it carries.
 */
async function openStream(url: string) {
  const { request, response } = await new Promise<{ request: ClientRequest; response: IncomingMessage }>((resolve, reject) => {
    const request = getHttp(`${url}/events`, { agent: false }, (response) => resolve({ request, response })).on('error', reject);
  });
  expect(response.statusCode).toBe(200);
  // Everything the stream sent, read by one listener for its whole life, so no chunk goes by unread.
  let text = '';
  const waiters = new Set<() => void>();
  response.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    for (const check of [...waiters]) check();
  });
  const until = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve) => {
      const check = (): void => {
        const found = pattern.exec(text);
        if (found === null) return;
        waiters.delete(check);
        text = text.slice(found.index + found[0].length);
        resolve(found);
      };
      waiters.add(check);
      check();
    });
  await until(/^: subscribed\n\n/);
  return {
    request,
    change: async (): Promise<HarnessChange> => JSON.parse((await until(/^data: (.*)\n\n/m))[1]!) as HarnessChange,
  };
}

describe('--max-event-streams', () => {
  it('refuses a stream beyond that many open with 503 event-stream-cap, serves the open ones, and takes one again once one closes', async () => {
    const d = await startDaemon({ args: ['--max-event-streams', '2', '--log-level', 'debug'] });
    const streams: ClientRequest[] = [];
    try {
      const first = await openStream(d.url);
      const second = await openStream(d.url);
      streams.push(first.request, second.request);

      const refused = await fetch(`${d.url}/events`);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({
        error: {
          code: 'event-stream-cap',
          message:
            'bermd is at its cap of 2 open event streams (--max-event-streams); close one, or start bermd with a higher --max-event-streams',
          cap: 2,
        },
      });
      // The rest of the API is served as before.
      expect((await fetch(`${d.url}/harnesses`)).status).toBe(200);

      // A client going away frees its place: bermd notices the connection closed, then a new stream is taken.
      first.request.destroy();
      await d.waitForLog((e) => e.msg === 'change stream closed');
      const third = await openStream(d.url);
      streams.push(third.request);
      expect((await fetch(`${d.url}/events`)).status).toBe(503);

      // Both open streams hear of a deploy.
      const heard = [second.change(), third.change()];
      expect((await put(`${d.url}/harnesses/capped`, await harnessImage())).status).toBe(201);
      expect(await Promise.all(heard)).toEqual([
        { type: 'deployed', name: 'capped', replaced: false },
        { type: 'deployed', name: 'capped', replaced: false },
      ]);
    } finally {
      for (const request of streams) request.destroy();
      await d.stop();
      await removeDir(d.stateDir);
    }
  });

  it('is refused when it is not a count of at least one', async () => {
    await expect(startDaemon({ args: ['--max-event-streams', '0'] })).rejects.toThrow(/--max-event-streams 0: must be at least 1/);
    await expect(startDaemon({ args: ['--max-event-streams', 'many'] })).rejects.toThrow(/--max-event-streams many/);
  });
});
