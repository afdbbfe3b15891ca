// The runtime's limits and the naming and auth options, as /mcp clients of a real bermd see them.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, type McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from 'bermd';
import type { ManifestData } from '@berm/manifest';
import { SPIN_LOG, basicImage, relayImage } from '../../../test/helpers/guest.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { BERMD_BIN, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, connectModern, deploy, put, textOf, undeploy, valueOf, type McpConnection } from './mcp-client.js';
import { stoppedAt } from '../../../test/helpers/timeouts.js';

async function call(c: McpConnection, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await c.client.callTool({ name, arguments: args })) as CallToolResult;
}

/** Ends a block's client, then its daemon, and removes the daemon's state. */
async function shutDown(c: McpConnection | undefined, d: RunningDaemon | undefined): Promise<void> {
  await c?.close();
  await d?.stop();
  if (d) await removeDir(d.stateDir);
}

describe('--call-timeout, --max-memory and --max-call-depth 0', () => {
  let d: RunningDaemon;
  let c: McpConnection;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--call-timeout', '500ms', '--max-memory', '1M', '--max-call-depth', '0'] });
    await deploy(d.url, 'basic', (await basicImage()).bytes);
    await deploy(d.url, 'relay', (await relayImage(['basic'])).bytes);
    c = await connect(d.url);
  });
  afterAll(() => shutDown(c, d));

  // That other calls answer while a guest spins is checked where the test decides when the spinning
  // stops (mcp.test.ts, 'serves other calls while one spins'): here the limit does, so it is not raced.
  it('stops a runaway guest at the time limit, and answers calls after', async () => {
    const stopped = await call(c, 'relay.spin');
    await d.waitForLog((e) => e.msg === SPIN_LOG.message);
    expect(stopped.isError).toBe(true);
    expect(textOf(stopped)).toMatch(stoppedAt('relay.spin', 500));
    expect(stopped._meta).toEqual({ 'berm/error': { code: 'timeout' } });
    expect(valueOf(await call(c, 'basic.echo', { after: true }))).toEqual({ after: true });
  });

  it('refuses at deploy an image whose memory starts above the cap, and caps the growth of the others', async () => {
    const res = await put(`${d.url}/harnesses/big`, (await basicImage({ initialPages: 17 })).bytes);
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: { code: string; message: string; limit: number } };
    expect(body.error.code).toBe('memory-too-large');
    expect(body.error.message).toMatch(/starts at 17 pages .* above the memory cap of 16 pages \(1 MiB\)/);
    expect(body.error.limit).toBe(1024 * 1024);
    expect((await fetch(`${d.url}/harnesses/big`)).status).toBe(404);

    expect(valueOf(await call(c, 'basic.grow'))).toEqual({ pages: 16 });
    // A declared maximum above the cap is lowered to it.
    await deploy(d.url, 'roomy', (await basicImage({ initialPages: 2, maxPages: 1000 })).bytes);
    expect(valueOf(await call(c, 'roomy.grow'))).toEqual({ pages: 16 });
  });

  it('refuses the first nested call at depth 0', async () => {
    const direct = valueOf(await call(c, 'relay.call', { program: 'basic', tool: 'echo', args: {} })) as { refused: string };
    expect(direct.refused).toMatch(/depth limit \(0\): basic\.echo was not called/);
    const chain = valueOf(await call(c, 'relay.chain', { program: 'relay' })) as { refused: string };
    expect(chain.refused).toMatch(/depth limit \(0\)/);
  });
});

describe('limits in a chain, and a host that cannot give a guest its memory', () => {
  let d: RunningDaemon;
  let c: McpConnection;
  beforeAll(async () => {
    // V8 gives no wasm memory above 100 pages (6.25 MiB) here, below bermd's cap (64 MiB): an image
    // whose memory starts above it passes every deploy check and cannot be instantiated, as on a host
    // out of memory.
    d = await startDaemon({ nodeArgs: ['--wasm-max-mem-pages=100'] });
    c = await connect(d.url);
  });
  afterAll(() => shutDown(c, d));

  it("applies a called harness's own smaller result limit inside a chain entered through a larger one", async () => {
    expect((await put(`${d.url}/harnesses/tight?max_result_size=100`, (await basicImage()).bytes)).status).toBe(201);
    await deploy(d.url, 'entry', (await relayImage(['tight'])).bytes);
    const args = { text: 'x'.repeat(200) };
    // entry runs under the daemon's 1 MiB; tight's own 100 bytes apply to what tight answers, nested or not.
    const nested = valueOf(await call(c, 'entry.call', { program: 'tight', tool: 'echo', args })) as { failed: string };
    expect(nested.failed).toMatch(/^tight\.echo returned \d+ bytes, above the limit of 100$/);
    const direct = await call(c, 'tight.echo', args);
    expect(direct._meta).toEqual({ 'berm/error': { code: 'result-too-large' } });
    // Within the limit, the same chain answers.
    expect(valueOf(await call(c, 'entry.call', { program: 'tight', tool: 'echo', args: { text: 'short' } }))).toEqual({
      ok: { text: 'short' },
    });
  });

  it('answers memory-limit when the host cannot give a guest its memory, and serves the others', async () => {
    await deploy(d.url, 'hungry', (await basicImage({ initialPages: 101 })).bytes);
    await deploy(d.url, 'modest', (await basicImage({ initialPages: 100 })).bytes);
    const result = await call(c, 'hungry.echo', { n: 1 });
    expect(result.isError).toBe(true);
    expect(result._meta).toEqual({ 'berm/error': { code: 'memory-limit' } });
    expect(textOf(result)).toMatch(/^hungry\.echo could not be instantiated: .*Out of memory/);
    expect(valueOf(await call(c, 'modest.echo', { n: 2 }))).toEqual({ n: 2 });
  });
});

/** Tools that answer a constant naming their harness, without an output schema, so a test sees which harness answered. */
function answering(tools: string[], answer: string): Promise<Uint8Array> {
  const manifest: ManifestData = manifestWithTools(tools);
  manifest.tools = manifest.tools.map(({ returns: _returns, ...t }) => t);
  return harnessImage(manifest, { tools: Object.fromEntries(tools.map((t) => [t, { kind: 'const', envelope: { ok: answer } }])) });
}

describe('--tool-separator _', () => {
  let d: RunningDaemon;
  let c: McpConnection;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--tool-separator', '_'] });
    c = await connect(d.url);
  });
  afterAll(() => shutDown(c, d));

  it('lists {harness}_{tool}, dispatches by the whole name, and refuses a harness whose names would collide', async () => {
    expect(c.client.getInstructions()).toContain('{harness}_{tool}');
    await deploy(d.url, 'a_b', await answering(['c'], 'from a_b'));
    const res = await put(`${d.url}/harnesses/a`, await answering(['b_c'], 'from a'));
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      error: { code: 'tool-name-collision', listed_as: 'a_b_c', tool: 'b_c', holder: { harness: 'a_b', tool: 'c' } },
    });
    expect((await fetch(`${d.url}/harnesses/a`)).status).toBe(404);

    await deploy(d.url, 'a', await answering(['x'], 'from a'));
    expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(['a_b_c', 'a_x']);
    // Splitting on the first separator would send a_b_c to harness a, tool b_c.
    expect(valueOf(await call(c, 'a_b_c', { query: 'q' }))).toBe('from a_b');
    expect(valueOf(await call(c, 'a_x', { query: 'q' }))).toBe('from a');
    const split = await c.client.callTool({ name: 'a_b_x', arguments: { query: 'q' } }).catch((e: unknown) => e);
    expect((split as McpError).code).toBe(ErrorCode.InvalidParams);

    // Once a_b is gone, its names are free.
    await undeploy(d.url, 'a_b');
    await deploy(d.url, 'a', await answering(['b_c', 'x'], 'from a'));
    expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(['a_b_c', 'a_x']);
    expect(valueOf(await call(c, 'a_b_c', { query: 'q' }))).toBe('from a');
  });
});

describe('--session-idle', () => {
  it('closes a session left idle that long, and keeps one in use', async () => {
    // A call time limit far beyond the test's, so that only the test ends the call that keeps a session in use.
    const d = await startDaemon({ args: ['--session-idle', '1s', '--call-timeout', '2m'] });
    const busy = await connect(d.url);
    try {
      await deploy(d.url, 'relay', (await relayImage()).bytes);
      const controller = new AbortController();
      const spinning = busy.client
        .callTool({ name: 'relay.spin', arguments: {} }, undefined, { signal: controller.signal })
        .catch((e: unknown) => e);
      await d.waitForLog((e) => e.msg === SPIN_LOG.message);

      // Then a session that makes one request and nothing more, and opens no stream.
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const initialize = {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'idle', version: '0' } },
      };
      const opened = await fetch(`${d.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(initialize) });
      expect(opened.status).toBe(200);
      await opened.body?.cancel();
      const idle = opened.headers.get('mcp-session-id')!;
      await d.waitForLog((e) => e.msg === 'closing an idle mcp session' && e.session === idle);
      const after = await fetch(`${d.url}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': idle },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(after.status).toBe(404);
      expect(await after.json()).toMatchObject({ error: { code: -32001, message: 'Session not found' } });

      // The busy session was last seen before the idle one, so the sweep that closed that one saw it too:
      // it was kept because it was in use.
      expect(d.log().some((e) => e.msg === 'closing an idle mcp session' && e.session === busy.transport.sessionId)).toBe(false);
      expect((await busy.client.listTools()).tools.map((t) => t.name)).toContain('relay.spin');
      controller.abort();
      expect(await spinning).toBeInstanceOf(Error);
    } finally {
      await busy.close();
      await d.stop();
      await removeDir(d.stateDir);
    }
  });

  it('is refused when it is not a duration', async () => {
    await expect(startDaemon({ args: ['--session-idle', 'soon'] })).rejects.toThrow(
      /--session-idle soon: expected a duration such as 500ms, 10s or 2m/,
    );
  });
});

describe('--token-file', () => {
  let d: RunningDaemon;
  let dir: string;
  const token = 'mcp-secret-token';
  beforeAll(async () => {
    dir = await tempDir();
    const file = path.join(dir, 'token');
    await writeFile(file, `${token}\n`);
    d = await startDaemon({ args: ['--token-file', file] });
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
    await removeDir(dir);
  });

  it('requires the bearer token on /mcp', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    let res = await fetch(`${d.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(initialize) });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: 'Bearer wrong' },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(401);
    await expect(connect(d.url)).rejects.toThrow();

    const auth = { authorization: `Bearer ${token}` };
    await deploy(d.url, 'basic', (await basicImage()).bytes, auth);
    const c = await connect(d.url, auth);
    try {
      expect(valueOf(await call(c, 'basic.echo', { ok: 1 }))).toEqual({ ok: 1 });
      // The session id alone is no credential.
      res = await fetch(`${d.url}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': c.transport.sessionId! },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
      });
      expect(res.status).toBe(401);
    } finally {
      await c.close();
    }
  });
});

describe('--mcp-fast-path', () => {
  it('is on by default, off with false, and refuses anything but true or false', async () => {
    expect(await parseOptions([])).toMatchObject({ mcpFastPath: true });
    expect(await parseOptions(['--mcp-fast-path', 'false'])).toMatchObject({ mcpFastPath: false });
    expect(await parseOptions(['--mcp-fast-path=true'])).toMatchObject({ mcpFastPath: true });
    await expect(parseOptions(['--mcp-fast-path', 'off'])).rejects.toThrow(/--mcp-fast-path off: expected true or false/);
  });
});

describe('the runtime and naming options', () => {
  it('sizes the pool above the per-harness limit, by the rule or as given', async () => {
    const defaults = await parseOptions([]);
    if (defaults === 'help') throw new Error('no help asked for');
    expect(defaults.workers).toBeGreaterThan(defaults.limits.max_concurrency);
    expect(defaults.maxQueue).toBe(64);
    expect(await parseOptions(['--max-concurrency', '3', '--workers', '4', '--max-queue', '0'])).toMatchObject({
      limits: { max_concurrency: 3 },
      workers: 4,
      maxQueue: 0,
    });
  });

  function run(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [BERMD_BIN, '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    return new Promise((resolve) => child.once('close', (c, s) => resolve({ code: c ?? s ?? -1, stdout, stderr })));
  }

  // One bermd started per case, one after the other: seconds in all, more beside the other test files.
  it('exits 2 naming the option when a value does not read', { timeout: 90_000 }, async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--call-timeout', 'soon'], /--call-timeout soon: expected a duration/],
      [['--call-timeout', '0s'], /--call-timeout 0s: must be at least 1ms/],
      [['--max-memory', '1K'], /--max-memory 1K: must be at least 64K/],
      [['--max-result-size', 'big'], /--max-result-size big: expected a byte count/],
      [['--max-call-depth=-1'], /--max-call-depth -1: expected a whole number/],
      [['--max-call-depth', 'two'], /--max-call-depth two: expected a whole number/],
      [['--tool-separator', 'x'], /--tool-separator "x": use 1 to 8 of the characters/],
      [['--tool-separator', ''], /--tool-separator "": use 1 to 8 of the characters/],
      [['--max-concurrency', '0'], /--max-concurrency 0: must be at least 1/],
      [['--max-concurrency', '2', '--workers', '2'], /--workers 2: must be more than --max-concurrency \(2\)/],
      [['--max-queue', 'lots'], /--max-queue lots: expected a whole number/],
    ];
    for (const [args, message] of cases) {
      const r = await run(args);
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });
});

describe('--max-listens', () => {
  it('refuses a 2026-07-28 listen beyond that many open, and leaves the open ones be', async () => {
    const d = await startDaemon({ args: ['--max-listens', '1'] });
    const first = await connectModern(d.url);
    const second = await connectModern(d.url);
    try {
      const listening = await first.listen();
      const refused = await second.listen().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toMatch(/Subscription limit reached/);
      // The open one still hears of a deploy.
      const told = first.toolsChanged.next();
      await deploy(d.url, 'after', (await relayImage()).bytes);
      await told;
      await listening.close();
    } finally {
      await Promise.all([first.close(), second.close()]);
      await d.stop();
      await removeDir(d.stateDir);
    }
  });

  it('is refused when it is not a count of at least one', async () => {
    await expect(startDaemon({ args: ['--max-listens', '0'] })).rejects.toThrow(/--max-listens 0: must be at least 1/);
    await expect(startDaemon({ args: ['--max-listens', 'many'] })).rejects.toThrow(/--max-listens many/);
  });
});
