// The operator's signals to a real bermd: SIGHUP reads the secrets file again (rotation without a
// restart), SIGTERM stops accepting, lets what is under way finish within the shutdown grace, and exits 0;
// a second SIGTERM (or Ctrl-C) during that drain exits at once. Each test sets up the secrets it asserts on.
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SPIN_LOG, httpImage, relayImage } from '../../../test/helpers/guest.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, deploy, textOf, valueOf, type McpConnection } from './mcp-client.js';
import { RemoteHost, resolvedTo } from './remote.js';

const FIRST = 'first-7f3a-value-of-one';
const ROTATED = 'rotated-91bc-value-of-one';
const TWO = 'two-04d1-value';
const THREE = 'three-5e2a-value';

function call(c: McpConnection, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return c.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
}

describe('SIGHUP', () => {
  let remote: RemoteHost;
  let d: RunningDaemon;
  let c: McpConnection;
  let dir: string;
  let file: string;
  let api: string;

  /** The authorization the remote host received for one fetch that sends `{secret:one}`. */
  async function sentForOne(): Promise<unknown> {
    const before = remote.seen.length;
    const answer = valueOf(await call(c, 'h.fetch', { url: `http://${api}/`, headers: { authorization: '{secret:one}' } }));
    expect(answer).toMatchObject({ ok: { status: 200 } });
    return remote.seen[before]?.headers.authorization;
  }

  /** Sends SIGHUP and waits for the log line about it. */
  async function hangUp(): Promise<Record<string, unknown>> {
    const about = (e: Record<string, unknown>): boolean => e.signal === 'SIGHUP';
    const before = d.log().filter(about).length;
    d.process.kill('SIGHUP');
    await d.waitForLog(() => d.log().filter(about).length > before);
    return d.log().filter(about)[before]!;
  }

  beforeAll(async () => {
    remote = await RemoteHost.start();
    remote.route('/', (_req, res) => res.end('{}'));
    api = `api.example.com:${remote.port}`;
    dir = await tempDir('bermd-secrets-');
    file = path.join(dir, 'secrets.json');
    await writeFile(file, JSON.stringify({ one: FIRST, two: TWO }), { mode: 0o600 });
    d = await startDaemon({
      args: ['--serve', 'berm.http.fetch', ...resolvedTo(remote, 'api.example.com'), '--secrets', file, '--log-level', 'debug'],
    });
    await deploy(d.url, 'h', (await httpImage({ fetch: [api], secrets: ['one'] })).bytes);
    c = await connect(d.url);
  });

  // Every test starts from the file the daemon started with, held: whatever another test left is read over.
  beforeEach(async () => {
    await writeFile(file, JSON.stringify({ one: FIRST, two: TWO }));
    await chmod(file, 0o600);
    expect(await hangUp()).toMatchObject({ msg: 'SIGHUP: secrets read again', held: 2 });
  });

  afterAll(async () => {
    await c.close();
    await d.stop();
    await remote.close();
    await removeDir(d.stateDir);
    await removeDir(dir);
  });

  it('reads the secrets file again: new values are sent from then on, and the log names what changed, never a value', async () => {
    expect(await sentForOne()).toBe(FIRST);
    await writeFile(file, JSON.stringify({ one: ROTATED, three: { value: THREE, harnesses: ['h'] } }));
    const logged = await hangUp();
    expect(logged).toMatchObject({ msg: 'SIGHUP: secrets read again', added: ['three'], removed: ['two'], changed: ['one'], held: 2 });
    expect(await sentForOne()).toBe(ROTATED);
    // No value, old or new, is in the log.
    for (const value of [FIRST, ROTATED, TWO, THREE]) expect(d.stderr()).not.toContain(value);
  });

  it('keeps the secrets it holds when the file no longer reads, and says why', async () => {
    await writeFile(file, '{"one": "half-written');
    expect(await hangUp()).toMatchObject({
      msg: 'SIGHUP: the secrets file could not be read; the secrets held are kept',
      reason: expect.stringContaining('is not JSON'),
    });
    expect(await sentForOne()).toBe(FIRST);
    await writeFile(file, JSON.stringify({ one: 'would-be-next' }));
    await chmod(file, 0o644);
    expect(await hangUp()).toMatchObject({ reason: expect.stringContaining('accessible to group or others (mode 0644)') });
    expect(await sentForOne()).toBe(FIRST);
    expect(d.stderr()).not.toContain('would-be-next');
    expect(d.stderr()).not.toContain(FIRST);
  });
});

describe('SIGHUP without a secrets file', () => {
  it('says there is nothing to read and keeps serving', async () => {
    const d = await startDaemon();
    try {
      d.process.kill('SIGHUP');
      await d.waitForLog((e) => e.signal === 'SIGHUP' && String(e.msg).includes('no secrets file'));
      expect((await fetch(`${d.url}/harnesses`)).status).toBe(200);
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});

describe('SIGTERM', () => {
  let remote: RemoteHost;
  beforeAll(async () => {
    remote = await RemoteHost.start();
    remote.hold('/held');
  });
  afterAll(async () => {
    await remote.close();
  });

  it('stops accepting, lets a call under way finish, then exits 0', async () => {
    const api = `api.example.com:${remote.port}`;
    const d = await startDaemon({
      args: ['--serve', 'berm.http.fetch', ...resolvedTo(remote, 'api.example.com'), '--shutdown-grace', '2m'],
    });
    try {
      await deploy(d.url, 'h', (await httpImage({ fetch: [api] })).bytes);
      const c = await connect(d.url);
      const before = remote.seen.length;
      // A call under way: its guest waits on a request the remote host holds.
      const underWay = call(c, 'h.fetch', { url: `http://${api}/held` });
      await remote.received(before + 1);
      const exit = d.stop('SIGTERM');
      await d.waitForLog((e) => e.msg === 'shutting down');
      // A new client is turned away: the port no longer accepts, or the request is refused as shutting down.
      const late = await fetch(`${d.url}/harnesses`).then(
        async (res) => `${res.status} ${((await res.json()) as { error: { code: string } }).error.code}`,
        () => 'not accepted',
      );
      expect(['not accepted', '503 shutting-down']).toContain(late);
      expect(d.process.exitCode).toBeNull();
      // The call finishes with its answer, then the daemon exits.
      remote.release('done');
      expect(valueOf(await underWay)).toMatchObject({ ok: { status: 200, body: 'done' } });
      expect(await exit).toBe(0);
      expect(d.log().some((e) => e.msg === 'stopped')).toBe(true);
      await c.client.close().catch(() => {});
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });

  it('stops a call still running when the grace is over, answers it, and exits 0', async () => {
    const d = await startDaemon({ args: ['--call-timeout', '2m', '--shutdown-grace', '300ms'] });
    try {
      await deploy(d.url, 'relay', (await relayImage()).bytes);
      const c = await connect(d.url);
      const running = call(c, 'relay.spin');
      await d.waitForLog((e) => e.msg === SPIN_LOG.message);
      const exit = d.stop('SIGTERM');
      const result = await running;
      expect(result.isError).toBe(true);
      expect(result._meta?.['berm/error']).toEqual({ code: 'closed' });
      expect(textOf(result)).toBe('the tool runner closed while relay.spin was running');
      expect(await exit).toBe(0);
      expect(
        d.log().some((e) => e.msg === 'the shutdown grace is over: stopping the calls still running and cutting open connections'),
      ).toBe(true);
      await c.client.close().catch(() => {});
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });

  // A second signal during the drain exits at once: SIGTERM twice (a supervisor), Ctrl-C twice (a terminal).
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('%s again during the drain exits at once, with %i, and says so', async (signal, code) => {
    // A call that would hold the drain for the whole grace: only the second signal ends the process before it.
    const d = await startDaemon({ args: ['--call-timeout', '2m', '--shutdown-grace', '2m'] });
    try {
      await deploy(d.url, 'relay', (await relayImage()).bytes);
      const c = await connect(d.url);
      const running = call(c, 'relay.spin').catch((e: unknown) => e);
      await d.waitForLog((e) => e.msg === SPIN_LOG.message);
      const exit = d.stop(signal);
      await d.waitForLog((e) => e.msg === 'shutting down' && e.signal === signal);
      expect(d.process.exitCode).toBeNull();
      d.process.kill(signal);
      expect(await exit).toBe(code);
      expect(d.log().filter((e) => e.level === 40 && e.signal === signal)).toEqual([
        expect.objectContaining({
          msg: 'signalled again while shutting down: exiting at once, without waiting for what is under way',
          exit_code: code,
        }),
      ]);
      // It did not drain: the call was cut off with its connection, and the clean stop was never reached.
      expect(await running).toBeInstanceOf(Error);
      expect(d.log().some((e) => e.msg === 'stopped')).toBe(false);
      await c.client.close().catch(() => {});
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});
