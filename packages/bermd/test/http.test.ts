// The control API end to end: a real bermd process on an ephemeral loopback port, spoken to with fetch.
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessImage, manifestWithTools, sampleManifest } from '../../../test/helpers/harness.js';
import { exited, removeDir, startDaemon, tempDir, type RunningDaemon, BERMD_BIN } from './daemon.js';
import { refusals } from './refusals.js';
import { spawn } from 'node:child_process';
import { DEFAULT_LIMITS } from '../dist/limits.js';

const sha256 = (bytes: Uint8Array): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

function put(url: string, bytes: Uint8Array, headers: Record<string, string> = { 'content-type': 'application/wasm' }): Promise<Response> {
  return fetch(url, { method: 'PUT', body: bytes, headers });
}

describe('bermd control API', () => {
  let d: RunningDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d.stop();
    await removeDir(d.stateDir);
  });

  it('prints where it listens: the real ephemeral port on loopback', () => {
    expect(d.port).toBeGreaterThan(0);
    expect(d.url).toBe(`http://127.0.0.1:${d.port}`);
    expect(d.stdout()).toBe(`bermd listening on ${d.url} (state: ${d.stateDir})\n`);
  });

  it('deploys (201), replaces (200), lists, gets, serves the image and undeploys (204)', async () => {
    const v1 = await harnessImage(manifestWithTools(['echo', 'size']));
    let res = await put(`${d.url}/harnesses/echo`, v1);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      name: 'echo',
      digest: sha256(v1),
      version: '0.1.0',
      tools: ['echo', 'size'],
      events: [],
      reported: [],
      notices: [],
      // The history entry the deploy made.
      entry: {
        action: 'deploy',
        at: expect.any(String),
        principal: 'anonymous',
        replica: expect.any(String),
        from: null,
        to: { digest: sha256(v1), version: '0.1.0' },
        forced: false,
        forced_past: [],
        reported: [],
        notices: [],
      },
    });

    const v2 = await harnessImage(manifestWithTools(['echo'], { version: '0.2.0' }));
    res = await put(`${d.url}/harnesses/echo`, v2, { 'content-type': 'application/octet-stream' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: 'echo', digest: sha256(v2), version: '0.2.0', tools: ['echo'] });

    res = await fetch(`${d.url}/harnesses`);
    expect(res.status).toBe(200);
    const list = (await res.json()) as Record<string, unknown>[];
    expect(list).toEqual([
      {
        name: 'echo',
        digest: sha256(v2),
        version: '0.2.0',
        tools: ['echo'],
        events: [],
        deployed_at: expect.any(String),
        // Without a token every request is made by anonymous.
        deployed_by: 'anonymous',
        last_used_at: null,
        limits: { ...DEFAULT_LIMITS },
        grants: { syscalls: {}, secrets: [] },
        bindings: {},
      },
    ]);
    expect(Number.isNaN(Date.parse(list[0]!.deployed_at as string))).toBe(false);

    res = await fetch(`${d.url}/harnesses/echo`);
    const detail = (await res.json()) as Record<string, unknown>;
    expect(detail).toMatchObject(list[0]!);
    expect((detail.manifest as { version: string; tools: { name: string }[] }).version).toBe('0.2.0');
    expect((detail.manifest as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['echo']);

    res = await fetch(`${d.url}/harnesses/echo/image`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/wasm');
    const image = new Uint8Array(await res.arrayBuffer());
    expect(sha256(image)).toBe(sha256(v2));

    res = await fetch(`${d.url}/harnesses/echo`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    res = await fetch(`${d.url}/harnesses/echo`, { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not-found', message: 'no harness named echo is deployed', name: 'echo' } });
    for (const p of ['/harnesses/echo', '/harnesses/echo/image']) {
      res = await fetch(`${d.url}${p}`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not-found');
    }
  });

  it('takes the image whatever content type the client declared', async () => {
    const bytes = await harnessImage();
    const res = await put(`${d.url}/harnesses/form`, bytes, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { digest: string }).digest).toBe(sha256(bytes));
    await fetch(`${d.url}/harnesses/form`, { method: 'DELETE' });
  });

  it('refuses names with a dot, or outside the rule, with 400 bad-name', async () => {
    const bytes = await harnessImage();
    for (const name of ['a.b', 'echo.v2', 'x'.repeat(65), 'caf%C3%A9']) {
      const res = await put(`${d.url}/harnesses/${name}`, bytes);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('bad-name');
      expect(body.error.message).toContain('no dots');
    }
    const get = await fetch(`${d.url}/harnesses/a.b`);
    expect(get.status).toBe(400);
    const ok = await put(`${d.url}/harnesses/${'x'.repeat(64)}`, bytes);
    expect(ok.status).toBe(201);
    await fetch(`${d.url}/harnesses/${'x'.repeat(64)}`, { method: 'DELETE' });
  });

  it('refuses each bad image with its status and stable code, and stores nothing', async () => {
    for (const c of refusals) {
      const res = await put(`${d.url}/harnesses/refused`, await c.image());
      const body = (await res.json()) as { error: Record<string, unknown> };
      expect([c.title, res.status, body.error.code]).toEqual([c.title, c.status, c.code]);
      expect(typeof body.error.message).toBe('string');
      if (c.reason !== undefined) expect(body.error.reason).toBe(c.reason);
      if (c.status === 422 && c.code !== 'not-wasm' && c.code !== 'abi-version' && c.code !== 'compile-error') {
        expect((body.error.problems as { code: string }[])[0]!.code).toBe(c.code);
      }
    }
    expect(await (await fetch(`${d.url}/harnesses`)).json()).toEqual([]);
    expect(await readdir(path.join(d.stateDir, 'harnesses'))).toEqual([]);
  });

  it('says which declared programs are not deployed, and deploys anyway', async () => {
    const manifest = sampleManifest({ deps: { programs: ['weather'], syscalls: {}, secrets: [] } });
    const res = await put(`${d.url}/harnesses/caller`, await harnessImage(manifest));
    expect(res.status).toBe(201);
    const body = (await res.json()) as { notices: { code: string; program: string; message: string }[] };
    expect(body.notices).toEqual([{ code: 'program-not-deployed', program: 'weather', message: expect.stringContaining('weather') }]);
    expect((await fetch(`${d.url}/harnesses/caller`)).status).toBe(200);
    await fetch(`${d.url}/harnesses/caller`, { method: 'DELETE' });
  });

  it('answers unknown routes and bad query values with JSON errors', async () => {
    let res = await fetch(`${d.url}/nothing-here`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not-found');
    res = await put(`${d.url}/harnesses/h?force=maybe`, await harnessImage());
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad-request');
    res = await put(`${d.url}/harnesses/h?force=true`, await harnessImage());
    expect(res.status).toBe(201);
    await fetch(`${d.url}/harnesses/h`, { method: 'DELETE' });
  });

  it('logs structured JSON on stderr and nothing more on stdout', async () => {
    await fetch(`${d.url}/harnesses`);
    const entries = d.log();
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.some((e) => e.msg === 'deployed harness' && e.harness === 'echo')).toBe(true);
    expect(d.stdout().split('\n').filter(Boolean)).toHaveLength(1);
  });
});

describe('bermd limits the image size', () => {
  it('answers 413 image-too-large past --max-image-size and stores nothing', async () => {
    const d = await startDaemon({ args: ['--max-image-size', '64K'] });
    try {
      const big = await harnessImage(sampleManifest(), { padBytes: 100 * 1024 });
      let res = await put(`${d.url}/harnesses/big`, big);
      expect(res.status).toBe(413);
      const body = (await res.json()) as { error: { code: string; limit: number } };
      expect(body.error.code).toBe('image-too-large');
      expect(body.error.limit).toBe(64 * 1024);
      expect(await readdir(path.join(d.stateDir, 'harnesses'))).toEqual([]);
      res = await put(`${d.url}/harnesses/small`, await harnessImage(sampleManifest(), { padBytes: 32 * 1024 }));
      expect(res.status).toBe(201);
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});

describe('bermd with --token-file', () => {
  let d: RunningDaemon;
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('bermd-token-');
    await writeFile(path.join(dir, 'token'), 's3cret-token\n');
    d = await startDaemon({ args: ['--token-file', path.join(dir, 'token')] });
  });
  afterAll(async () => {
    await d.stop();
    await removeDir(d.stateDir);
    await removeDir(dir);
  });

  it('answers 401 to every route without the right bearer token, and does nothing', async () => {
    const bytes = await harnessImage();
    const attempts: [string, RequestInit][] = [
      ['/harnesses', {}],
      ['/harnesses/h', {}],
      ['/harnesses/h/image', {}],
      ['/harnesses/h', { method: 'DELETE' }],
      ['/harnesses/h', { method: 'PUT', body: bytes }],
      ['/nothing-here', {}],
    ];
    for (const auth of [undefined, 'Bearer wrong', 'Bearer s3cret-token2', 's3cret-token', 'Basic s3cret-token']) {
      for (const [p, init] of attempts) {
        const res = await fetch(`${d.url}${p}`, { ...init, headers: auth === undefined ? {} : { authorization: auth } });
        expect([auth, p, res.status]).toEqual([auth, p, 401]);
        // A token given and refused is named invalid (RFC 6750 §3.1); without one the challenge is bare.
        const given = auth !== undefined && /^bearer /i.test(auth);
        expect(res.headers.get('www-authenticate')).toBe(
          given ? 'Bearer error="invalid_token", error_description="the token is not one this bermd holds"' : 'Bearer',
        );
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      }
    }
    expect(await readdir(path.join(d.stateDir, 'harnesses'))).toEqual([]);
  });

  it('serves requests that carry the token', async () => {
    const headers = { authorization: 'Bearer s3cret-token' };
    const res = await fetch(`${d.url}/harnesses/h`, { method: 'PUT', body: await harnessImage(), headers });
    expect(res.status).toBe(201);
    const list = await fetch(`${d.url}/harnesses`, { headers });
    expect(((await list.json()) as { name: string }[]).map((h) => h.name)).toEqual(['h']);
  });

  it('reads the scheme without regard to case, as HTTP defines it', async () => {
    for (const authorization of ['bearer s3cret-token', 'BEARER s3cret-token', 'Bearer  s3cret-token']) {
      const res = await fetch(`${d.url}/harnesses`, { headers: { authorization } });
      expect([authorization, res.status]).toEqual([authorization, 200]);
    }
  });
});

describe('bermd across restarts', { timeout: 90_000 }, () => {
  it('restores what it stored; an image that no longer loads is logged and skipped, the rest come up', async () => {
    const stateDir = await tempDir();
    try {
      const first = await startDaemon({ stateDir });
      const images = {
        a: await harnessImage(manifestWithTools(['x'])),
        b: await harnessImage(manifestWithTools(['y'])),
        c: await harnessImage(manifestWithTools(['z'])),
      };
      for (const [name, bytes] of Object.entries(images)) expect((await put(`${first.url}/harnesses/${name}`, bytes)).status).toBe(201);
      const before = (await (await fetch(`${first.url}/harnesses`)).json()) as { name: string }[];
      expect(await first.stop('SIGTERM')).toBe(0);

      const second = await startDaemon({ stateDir });
      expect(await (await fetch(`${second.url}/harnesses`)).json()).toEqual(before);
      for (const [name, bytes] of Object.entries(images)) {
        const res = await fetch(`${second.url}/harnesses/${name}/image`);
        expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(bytes));
      }
      expect(await second.stop('SIGINT')).toBe(0);

      // Corrupt b's stored image: garbage where its code was.
      const bPath = path.join(stateDir, 'harnesses', 'b.wasm');
      const stored = await readFile(bPath);
      stored.fill(0xff, 8);
      await writeFile(bPath, stored);

      const third = await startDaemon({ stateDir });
      try {
        const names = ((await (await fetch(`${third.url}/harnesses`)).json()) as { name: string }[]).map((h) => h.name);
        expect(names).toEqual(['a', 'c']);
        const skipped = await third.waitForLog((e) => e.harness === 'b' && e.level === 50);
        expect(skipped.msg).toContain('skipped');
        expect((await fetch(`${third.url}/harnesses/b`)).status).toBe(404);
        // Deploying b again replaces the unloadable image.
        expect((await put(`${third.url}/harnesses/b`, images.b)).status).toBe(201);
      } finally {
        await third.stop();
      }
    } finally {
      await removeDir(stateDir);
    }
  });

  it('finishes a deploy under way when told to stop, then exits 0', async () => {
    const d = await startDaemon();
    try {
      const bytes = await harnessImage(sampleManifest(), { padBytes: 256 * 1024 });
      const half = bytes.length >> 1;
      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${d.url}/harnesses/late`, {
          method: 'PUT',
          headers: { 'content-type': 'application/wasm', 'content-length': String(bytes.length) },
        });
        req.on('response', (res) => {
          let body = '';
          res
            .setEncoding('utf8')
            .on('data', (c: string) => (body += c))
            .on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.write(bytes.subarray(0, half));
        void d
          .waitForLog((e) => e.msg === 'incoming request' && (e.req as { url?: string })?.url === '/harnesses/late')
          .then(() => {
            d.process.kill('SIGTERM');
            return d.waitForLog((e) => e.msg === 'shutting down');
          })
          .then(() => req.end(bytes.subarray(half)), reject);
      });
      const { status, body } = await answer;
      expect(status).toBe(201);
      expect(JSON.parse(body).digest).toBe(sha256(bytes));
      expect(await exited(d.process)).toBe(0);

      const again = await startDaemon({ stateDir: d.stateDir });
      expect(((await (await fetch(`${again.url}/harnesses`)).json()) as { name: string }[]).map((h) => h.name)).toEqual(['late']);
      await again.stop();
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});

describe('bermd command line', { timeout: 90_000 }, () => {
  async function run(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [BERMD_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const code = await new Promise<number | string>((resolve) => child.once('close', (c, s) => resolve(c ?? s ?? -1)));
    return { code, stdout, stderr };
  }

  it('exits 2 with the usage on a bad option', async () => {
    for (const args of [
      ['--bogus'],
      ['--listen', 'nowhere'],
      ['--listen', '127.0.0.1:99999'],
      ['--max-image-size', 'lots'],
      ['--token-file', '/nonexistent/token'],
    ]) {
      const r = await run(args);
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stderr).toMatch(/^bermd: /);
      expect(r.stderr).toContain('usage: bermd');
      // The synopsis only: every option's description is --help's.
      expect(r.stderr).not.toContain('--listen          address to bind');
      expect(r.stderr).toContain('bermd --help describes each option');
      expect(r.stdout).toBe('');
    }
  });

  it('exits 1 when its port is taken', async () => {
    const d = await startDaemon();
    try {
      const r = await run(['--listen', `127.0.0.1:${d.port}`, '--state', d.stateDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('cannot listen');
      expect(r.stdout).toBe('');
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });

  it('prints its usage for --help', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--max-image-size');
  });
});
