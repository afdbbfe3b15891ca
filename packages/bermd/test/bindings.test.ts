// Operator bindings at deploy (limits and grants) against real bermd processes: what a deploy may ask
// for and the codes of what it may not, the limits applied to calls, the bindings kept across restarts
// and shown by `berm ls`, and kept with the image they were given with when bermd stops mid-deploy
// (from states written by hand here; crash.test.ts kills bermd at each step of such a deploy).
import { createHash } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BermClient } from '@berm/client';
import { basicImage, httpImage } from '../../../test/helpers/guest.js';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { runCli, Scratch } from '../../cli/test/helpers/cli.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { connect, put, textOf, valueOf } from './mcp-client.js';

const sha256 = (bytes: Uint8Array): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const K = 1024;
const M = 1024 * 1024;

/** The daemon's own limits in these tests: every harness's are at most these. */
const DAEMON_ARGS = [
  '--serve',
  'berm.http.fetch',
  '--call-timeout',
  '5s',
  '--max-memory',
  '4M',
  '--max-result-size',
  '64K',
  '--max-concurrency',
  '3',
];

interface Detail {
  digest: string;
  limits: { timeout: number; max_memory: number; max_result_size: number; max_concurrency: number };
  grants: { syscalls: Record<string, string[]>; secrets: string[] };
  bindings: Record<string, unknown>;
}

async function detail(d: RunningDaemon, name: string): Promise<Detail> {
  const res = await fetch(`${d.url}/harnesses/${name}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Detail;
}

describe('deploy bindings', () => {
  let d: RunningDaemon;
  let fetcher: Uint8Array;

  beforeAll(async () => {
    d = await startDaemon({ args: DAEMON_ARGS });
    fetcher = (await httpImage({ fetch: ['api.example.com', '*.example.org'], secrets: ['example'] })).bytes;
  });

  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  it('refuses grants and limits the image or the daemon does not allow, each with its status and code, and stores nothing', async () => {
    const cases: Array<[string, number, string]> = [
      ['grant=secret%3Dnope', 422, 'grant-not-declared'],
      ['grant=berm.http.fetch%3Devil.example.com', 422, 'grant-not-declared'],
      // A wildcard covers the names below it, not the name itself.
      ['grant=berm.http.fetch%3Dexample.org', 422, 'grant-not-declared'],
      ['grant=syscall%3Dberm.http.proxy', 422, 'grant-not-declared'],
      ['grant=syscall%3Dberm.call', 400, 'bad-grant'],
      ['grant=everything', 400, 'bad-grant'],
      ['grant=berm.http.fetch%3Dhttp%3A%2F%2Fapi.example.com', 400, 'bad-grant'],
      ['grant=none&grant=secret%3Dexample', 400, 'bad-grant'],
      ['timeout=6s', 422, 'limit-above-daemon'],
      ['max_memory=8M', 422, 'limit-above-daemon'],
      ['max_result_size=1M', 422, 'limit-above-daemon'],
      ['max_concurrency=4', 422, 'limit-above-daemon'],
      ['timeout=soon', 400, 'bad-limit'],
      ['max_concurrency=0', 400, 'bad-limit'],
      ['max_concurrency=1.5', 400, 'bad-limit'],
      ['max_memory=1K', 400, 'bad-limit'],
      ['timeout=1s&timeout=2s', 400, 'bad-request'],
      // A misspelt parameter never deploys with everything granted.
      ['grnt=secret%3Dexample', 400, 'bad-request'],
    ];
    for (const [query, status, code] of cases) {
      const res = await put(`${d.url}/harnesses/f?${query}`, fetcher);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect([query, res.status, body.error.code]).toEqual([query, status, code]);
      expect(body.error.message.length).toBeGreaterThan(10);
    }
    expect((await fetch(`${d.url}/harnesses/f`)).status).toBe(404);
    expect(await readdir(path.join(d.stateDir, 'harnesses'))).toEqual([]);

    const res = await put(`${d.url}/harnesses/f?grant=secret%3Dnope&grant=berm.http.fetch%3Devil.example.com`, fetcher);
    const body = (await res.json()) as { error: { message: string; problems: Array<{ grant: string; message: string }> } };
    expect(body.error.message).toBe(
      "a grant may only narrow what the image declares: secret nope is not declared in the image's deps.secrets (and 1 more)",
    );
    expect(body.error.problems).toEqual([
      { grant: 'secret=nope', message: "secret nope is not declared in the image's deps.secrets" },
      {
        grant: 'berm.http.fetch=evil.example.com',
        message: 'host evil.example.com is not declared under berm.http.fetch (declared: api.example.com, *.example.org)',
      },
    ]);
  });

  it('grants what it is given, each no more than declared; without grants, everything declared', async () => {
    const client = new BermClient(d.url);
    try {
      await client.deploy('f', fetcher);
      let f = await detail(d, 'f');
      expect(f.grants).toEqual({ syscalls: { 'berm.http.fetch': ['api.example.com', '*.example.org'] }, secrets: ['example'] });
      expect(f.bindings).toEqual({});
      expect(f.limits).toEqual({ timeout: 5000, max_memory: 4 * M, max_result_size: 64 * K, max_concurrency: 3 });

      await client.deploy('f', fetcher, {
        grants: ['berm.http.fetch=API.example.org,*.deep.example.org', 'secret=example'],
        callTimeoutMs: '1.5s',
        maxResultBytes: '8K',
        maxConcurrency: 2,
      });
      f = await detail(d, 'f');
      const grants = { syscalls: { 'berm.http.fetch': ['api.example.org', '*.deep.example.org'] }, secrets: ['example'] };
      expect(f.grants).toEqual(grants);
      expect(f.limits).toEqual({ timeout: 1500, max_memory: 4 * M, max_result_size: 8 * K, max_concurrency: 2 });
      expect(f.bindings).toEqual({ timeout: 1500, max_result_size: 8 * K, max_concurrency: 2, grants });

      await client.deploy('f', fetcher, { grants: ['syscall=berm.http.fetch'] });
      f = await detail(d, 'f');
      expect(f.grants).toEqual({ syscalls: { 'berm.http.fetch': ['api.example.com', '*.example.org'] }, secrets: [] });
      // Each deploy states its bindings: one without them is back to the defaults.
      await client.deploy('f', fetcher);
      f = await detail(d, 'f');
      expect(f.bindings).toEqual({});
      expect(f.limits.timeout).toBe(5000);
    } finally {
      await client.close();
    }
  });

  it('notes a granted secret the operator does not provide', async () => {
    const res = await put(`${d.url}/harnesses/n`, fetcher);
    const body = (await res.json()) as { notices: unknown[] };
    expect(body.notices).toEqual([
      {
        code: 'secret-not-provided',
        secret: 'example',
        message:
          'secret example is granted but not provided for calls that enter through n: requests naming it will be refused (see --secrets)',
      },
    ]);
  });

  it("runs calls under the harness's own memory cap and result size", async () => {
    const c = await connect(d.url);
    try {
      const basic = await basicImage();
      let res = await put(`${d.url}/harnesses/small?max_memory=256K`, basic.bytes);
      expect(res.status).toBe(201);
      res = await put(`${d.url}/harnesses/roomy`, basic.bytes);
      expect(res.status).toBe(201);
      // The module is compiled with the harness's cap: memory.grow fails past 4 pages, where roomy goes to 64.
      expect(valueOf((await c.client.callTool({ name: 'small.grow', arguments: {} })) as CallToolResult)).toEqual({ pages: 4 });
      expect(valueOf((await c.client.callTool({ name: 'roomy.grow', arguments: {} })) as CallToolResult)).toEqual({ pages: 64 });

      res = await put(`${d.url}/harnesses/big?max_memory=256K`, (await basicImage({ initialPages: 5 })).bytes);
      expect(res.status).toBe(422);
      const body = (await res.json()) as { error: { code: string; message: string; limit: number } };
      expect(body.error).toMatchObject({ code: 'memory-too-large', limit: 256 * K });
      expect(body.error.message).toMatch(/starts at 5 pages .* above the memory cap of 4 pages .*the max_memory the deploy set/);

      res = await put(`${d.url}/harnesses/tight?max_result_size=100`, basic.bytes);
      expect(res.status).toBe(201);
      const args = { text: 'x'.repeat(200) };
      const tight = (await c.client.callTool({ name: 'tight.echo', arguments: args })) as CallToolResult;
      expect(tight.isError).toBe(true);
      expect(textOf(tight)).toMatch(/^tight\.echo returned \d+ bytes, above the limit of 100$/);
      expect(valueOf((await c.client.callTool({ name: 'roomy.echo', arguments: args })) as CallToolResult)).toEqual(args);
    } finally {
      await c.close();
    }
  });
});

describe('bindings across restarts', () => {
  let scratch: Scratch;
  beforeAll(async () => {
    scratch = await Scratch.create();
  });
  afterAll(async () => {
    await scratch?.remove();
  });

  it('keeps what crab deploy set through a restart, and berm ls shows it', async () => {
    const image = await scratch.write(
      'f.wasm',
      (await httpImage({ fetch: ['api.example.com', 'api.example.net:8443'], secrets: ['example'] })).bytes,
    );
    let d = await startDaemon({ args: DAEMON_ARGS });
    const stateDir = d.stateDir;
    try {
      const env = { BERM_URL: d.url, BERM_TOKEN: undefined };
      const r = await runCli(
        [
          'deploy',
          'f',
          image,
          '--timeout',
          '2s',
          '--max-memory',
          '1M',
          '--max-concurrency',
          '1',
          '--grant',
          'berm.http.fetch=api.example.net:8443',
          '--grant',
          'secret=example',
        ],
        { env },
      );
      expect([r.code, r.stderr]).toEqual([0, '']);
      const refused = await runCli(['deploy', 'g', image, '--grant', 'secret=other'], { env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("secret other is not declared in the image's deps.secrets");

      await d.stop();
      d = await startDaemon({ stateDir, args: DAEMON_ARGS });
      const after = { BERM_URL: d.url, BERM_TOKEN: undefined };
      const json = await runCli(['ls', '--json'], { bin: 'berm', env: after });
      expect(json.code).toBe(0);
      const grants = { syscalls: { 'berm.http.fetch': ['api.example.net:8443'] }, secrets: ['example'] };
      expect(JSON.parse(json.stdout)).toEqual([
        expect.objectContaining({
          name: 'f',
          limits: { timeout: 2000, max_memory: M, max_result_size: 64 * K, max_concurrency: 1 },
          grants,
          bindings: { timeout: 2000, max_memory: M, max_concurrency: 1, grants },
        }),
      ]);
      const table = await runCli(['ls'], { bin: 'berm', env: after });
      const [header, row] = table.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(/ {3,}/));
      expect(row!.slice(header!.indexOf('LIMITS'))).toEqual(['2s/1M/64K/1', 'berm.http.fetch=api.example.net:8443 secret=example']);
    } finally {
      await d.stop();
      await removeDir(stateDir);
    }
  });

  it("restores bindings above a daemon limit lowered since, under the daemon's limit, and says so", async () => {
    let d = await startDaemon({ args: DAEMON_ARGS });
    const stateDir = d.stateDir;
    try {
      const res = await put(`${d.url}/harnesses/f?timeout=4s`, (await basicImage()).bytes);
      expect(res.status).toBe(201);
      await d.stop();
      d = await startDaemon({ stateDir, args: ['--call-timeout', '3s'] });
      const f = await detail(d, 'f');
      expect(f.limits.timeout).toBe(3000);
      expect(f.bindings).toEqual({ timeout: 4000 });
      await d.waitForLog((e) => e.harness === 'f' && e.level === 40 && String(e.msg).includes("the daemon's apply"));
    } finally {
      await d.stop();
      await removeDir(stateDir);
    }
  });
});

describe('bindings and a stop in the middle of a deploy', () => {
  const v1Bindings = { timeout: 2000 };
  const v2Bindings = { timeout: 3000, max_result_size: 32 * K };

  it('restores each image with its own bindings, whichever write a stop came after', async () => {
    let d = await startDaemon({ args: DAEMON_ARGS });
    const stateDir = d.stateDir;
    const dir = path.join(stateDir, 'harnesses');
    try {
      const v1 = await harnessImage(sampleManifest({ version: '1.0.0' }));
      const v2 = await harnessImage(sampleManifest({ version: '2.0.0' }));
      expect((await put(`${d.url}/harnesses/h?timeout=2s`, v1)).status).toBe(201);
      await d.stop();
      const meta = JSON.parse(await readFile(path.join(dir, 'h.json'), 'utf8'));
      expect(meta.bindings).toEqual({ [sha256(v1)]: v1Bindings });

      // What a deploy of v2 with its bindings writes first: the metadata of v1, holding v2's bindings too.
      const first = { ...meta, bindings: { [sha256(v1)]: v1Bindings, [sha256(v2)]: v2Bindings } };
      await writeFile(path.join(dir, 'h.json'), JSON.stringify(first));
      // Stopped there: v1, with v1's bindings.
      d = await startDaemon({ stateDir, args: DAEMON_ARGS });
      let h = await detail(d, 'h');
      expect([h.digest, h.bindings]).toEqual([sha256(v1), v1Bindings]);
      await d.stop();

      // Stopped after the image's rename: v2, with v2's bindings (the metadata is derived again from the image).
      await writeFile(path.join(dir, 'h.json'), JSON.stringify(first));
      await writeFile(path.join(dir, 'h.wasm'), v2);
      d = await startDaemon({ stateDir, args: DAEMON_ARGS });
      h = await detail(d, 'h');
      expect([h.digest, h.bindings, h.limits.max_result_size]).toEqual([sha256(v2), v2Bindings, 32 * K]);
      const repaired = JSON.parse(await readFile(path.join(dir, 'h.json'), 'utf8'));
      expect(repaired.bindings).toEqual({ [sha256(v2)]: v2Bindings });
    } finally {
      await d.stop();
      await removeDir(stateDir);
    }
  });
});
