// The client against a real bermd process (and, for failures bermd never produces, tiny stand-in servers).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { Agent as HttpsAgent, createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BermClient, BermClientError, DaemonUnreachableError, DEFAULT_URL, type BreaksCallersError } from '@berm/client';
import { harnessImage, manifestWithTools, sampleManifest } from '../../../test/helpers/harness.js';
import { closedPort, standIn } from '../../../test/helpers/loopback.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { seedHarness } from '../../bermd/test/seed.js';

const sha256 = (bytes: Uint8Array): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

async function failure(p: Promise<unknown>): Promise<BermClientError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BermClientError);
    return e as BermClientError;
  }
  throw new Error('expected the call to fail');
}

describe('BermClient', () => {
  let d: RunningDaemon;
  let client: BermClient;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--max-image-size', '1M'] });
    client = new BermClient(d.url);
  });
  afterAll(async () => {
    await client.close();
    await d.stop();
    await removeDir(d.stateDir);
  });

  it('deploys, replaces, lists, gets, fetches the image and undeploys', async () => {
    const v1 = await harnessImage(manifestWithTools(['echo', 'size']));
    const first = await client.deploy('echo', v1);
    expect(first).toEqual({
      name: 'echo',
      digest: sha256(v1),
      version: '0.1.0',
      tools: ['echo', 'size'],
      events: [],
      reported: [],
      notices: [],
      replaced: false,
      entry: expect.objectContaining({ action: 'deploy', from: null, to: { digest: sha256(v1), version: '0.1.0' }, forced: false }),
    });
    const v2 = await harnessImage(manifestWithTools(['echo'], { version: '0.2.0' }));
    const second = await client.deploy('echo', v2, { force: true });
    expect(second.replaced).toBe(true);
    expect(second.digest).toBe(sha256(v2));

    const list = await client.list();
    expect(list.map((h) => [h.name, h.version, h.digest, h.last_used_at])).toEqual([['echo', '0.2.0', sha256(v2), null]]);
    const detail = await client.get('echo');
    expect(detail.manifest.version).toBe('0.2.0');
    expect(sha256(await client.image('echo'))).toBe(sha256(v2));

    await client.undeploy('echo');
    expect(await client.list()).toEqual([]);
  });

  it("carries the daemon's code, status, message and body on a refusal", async () => {
    const e = await failure(client.deploy('h', await harnessImage(manifestWithTools(['a', 'b']), { omit: ['berm_tool_b'] })));
    expect(e.code).toBe('missing-export');
    expect(e.status).toBe(422);
    expect(e.message).toContain('berm_tool_b');
    expect((e.body!.problems as { export: string }[])[0]!.export).toBe('berm_tool_b');
    expect(e.toJSON()).toMatchObject({
      code: 'missing-export',
      status: 422,
      problems: [expect.objectContaining({ code: 'missing-export' })],
    });
  });

  it('maps each HTTP error to its code', async () => {
    expect((await failure(client.get('nope'))).code).toBe('not-found');
    expect((await failure(client.get('nope'))).status).toBe(404);
    expect((await failure(client.undeploy('nope'))).code).toBe('not-found');
    expect((await failure(client.image('nope'))).code).toBe('not-found');
    const bad = await failure(client.deploy('h', new TextEncoder().encode('not an image')));
    expect([bad.code, bad.status, bad.body?.reason]).toEqual(['bad-image', 400, 'not-an-image']);
  });

  it('gets 413 image-too-large for an image past the daemon limit, even while still sending it', async () => {
    const big = await harnessImage(sampleManifest(), { padBytes: 8 * 1024 * 1024 });
    const e = await failure(client.deploy('big', big));
    expect([e.code, e.status]).toEqual(['image-too-large', 413]);
    expect(await client.list()).toEqual([]);
  });

  it('refuses a name outside the rule without sending anything', async () => {
    for (const name of ['a.b', '..', '', 'a/b']) {
      const e = await failure(client.get(name));
      expect([e.code, e.status]).toEqual(['bad-name', undefined]);
    }
  });

  it('says the daemon is unreachable when nothing listens at its address', async () => {
    const port = await closedPort();
    const lonely = new BermClient(`http://127.0.0.1:${port}`);
    try {
      const e = await failure(lonely.list());
      expect(e).toBeInstanceOf(DaemonUnreachableError);
      expect(e.code).toBe('daemon-unreachable');
      expect(e.status).toBeUndefined();
      expect(e.message).toContain(`http://127.0.0.1:${port}`);
      expect(e.message).toContain('ECONNREFUSED');
      expect((e as DaemonUnreachableError).hint).toContain('bermd');
    } finally {
      await lonely.close();
    }
  });

  it('rejects a base URL that is not http', () => {
    for (const url of ['not a url', 'ftp://127.0.0.1/']) {
      expect(() => new BermClient(url)).toThrow(BermClientError);
    }
    expect(new BermClient().url).toBe(DEFAULT_URL);
    expect(new BermClient('http://127.0.0.1:9/').url).toBe('http://127.0.0.1:9');
  });

  it('tells a connection that dies from one never made, and a non-bermd answer from an error', async () => {
    const hangUp = await standIn((req) => req.socket.destroy());
    const html = await standIn((_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>bad gateway</h1>'));
    try {
      const lost = new BermClient(hangUp.url);
      expect((await failure(lost.list())).code).toBe('connection-lost');
      await lost.close();
      const proxy = new BermClient(html.url);
      const e = await failure(proxy.list());
      expect([e.code, e.status]).toEqual(['unexpected-response', 502]);
      expect(e.message).toContain('bad gateway');
      await proxy.close();
    } finally {
      hangUp.server.close();
      html.server.close();
    }
  });
  it('says the connection was lost when it dies in the middle of an answer', async () => {
    const cut = await standIn((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('[{"name":', () => res.socket?.destroy());
    });
    const client = new BermClient(cut.url);
    try {
      const e = await failure(client.list());
      expect([e.code, e.status]).toEqual(['connection-lost', undefined]);
      expect(e.message).toContain(`GET /harnesses`);
    } finally {
      await client.close();
      cut.server.close();
    }
  });
});

describe('BermClient with a token', () => {
  it('sends it as a bearer token; without it the daemon answers unauthorized', async () => {
    const dir = await tempDir('bermd-client-token-');
    await writeFile(path.join(dir, 'token'), 'tok-123');
    const d = await startDaemon({ args: ['--token-file', path.join(dir, 'token')] });
    const withToken = new BermClient(d.url, { token: 'tok-123' });
    const without = new BermClient(d.url);
    try {
      await withToken.deploy('h', await harnessImage());
      expect((await withToken.list()).map((h) => h.name)).toEqual(['h']);
      const e = await failure(without.list());
      expect([e.code, e.status]).toEqual(['unauthorized', 401]);
    } finally {
      await withToken.close();
      await without.close();
      await d.stop();
      await removeDir(d.stateDir);
      await removeDir(dir);
    }
  });
});

describe('BermClient and the compatibility gate', () => {
  it('gives usage per tool, the breaks-callers refusal with its breaks, and what a forced deploy reported', async () => {
    const dir = await tempDir('bermd-client-gate-');
    const usedAt = Date.now() - 3600 * 1000;
    await seedHarness(dir, 'h', await harnessImage(manifestWithTools(['echo', 'size'])), { tools: { echo: usedAt } });
    const d = await startDaemon({ stateDir: dir });
    const client = new BermClient(d.url);
    try {
      expect((await client.get('h')).usage).toEqual({ tools: { echo: new Date(usedAt).toISOString(), size: null }, events: {} });
      const next = await harnessImage(manifestWithTools([]));
      // A dry run is refused as the deploy would be; forced, it answers what the deploy would, and changes nothing.
      const dry = await failure(client.deploy('h', next, { dryRun: true }));
      expect([dry.code, dry.status]).toEqual(['breaks-callers', 409]);
      const forcedDry = await client.deploy('h', next, { dryRun: true, force: true });
      expect(forcedDry).toMatchObject({ name: 'h', digest: sha256(next), dry_run: true, replaced: true, tools: [] });
      expect(forcedDry.reported.map((b) => [b.tool, b.used])).toEqual([
        ['echo', true],
        ['size', false],
      ]);
      expect(forcedDry.manifest?.tools).toEqual([]);
      expect((await client.get('h')).tools).toEqual(['echo', 'size']);

      const e = await failure(client.deploy('h', next));
      expect([e.code, e.status]).toEqual(['breaks-callers', 409]);
      const body = e.body as unknown as BreaksCallersError;
      expect(body.breaks).toEqual([
        expect.objectContaining({ code: 'tool-removed', tool: 'echo', last_used_at: new Date(usedAt).toISOString(), used: true }),
      ]);
      expect(body.reported).toEqual([expect.objectContaining({ code: 'tool-removed', tool: 'size', last_used_at: null, used: false })]);
      expect(body.window_seconds).toBe(30 * 24 * 3600);

      const forced = await client.deploy('h', next, { force: true });
      expect(forced.replaced).toBe(true);
      expect(forced.reported.map((b) => [b.tool, b.used])).toEqual([
        ['echo', true],
        ['size', false],
      ]);
    } finally {
      await client.close();
      await d.stop();
      await removeDir(dir);
    }
  });
});

describe('BermClient and the deploy history', () => {
  let d: RunningDaemon;
  let client: BermClient;
  const images: Record<string, Uint8Array> = {};
  beforeAll(async () => {
    d = await startDaemon();
    client = new BermClient(d.url);
    images.v1 = await harnessImage(manifestWithTools(['echo']));
    images.v2 = await harnessImage(manifestWithTools(['echo', 'size'], { version: '0.2.0' }));
  });
  afterAll(async () => {
    await client.close();
    await d.stop();
    await removeDir(d.stateDir);
  });

  it('reads the history newest first a page at a time, and what a rollback can go back to', async () => {
    const first = await client.deploy('paged', images.v1!);
    const second = await client.deploy('paged', images.v2!);
    expect(second.entry).toMatchObject({
      action: 'deploy',
      principal: 'anonymous',
      from: { digest: sha256(images.v1!), version: '0.1.0' },
      to: { digest: sha256(images.v2!), version: '0.2.0' },
    });

    const page = await client.history('paged');
    expect(page).toEqual({ entries: [second.entry, first.entry], next_cursor: null });
    const newest = await client.history('paged', { limit: 1 });
    expect(newest.entries).toEqual([second.entry]);
    expect(newest.next_cursor).toEqual(expect.any(String));
    const older = await client.history('paged', { limit: 1, cursor: newest.next_cursor! });
    expect(older).toEqual({ entries: [first.entry], next_cursor: null });
    expect(await client.history('never-deployed')).toEqual({ entries: [], next_cursor: null });

    const kept = await client.images('paged');
    expect(kept.current).toEqual({ digest: sha256(images.v2!), version: '0.2.0' });
    expect(kept.retained.map((r) => [r.digest, r.version])).toEqual([[sha256(images.v1!), '0.1.0']]);
    expect(sha256(await client.retainedImage('paged', sha256(images.v1!)))).toBe(sha256(images.v1!));
  });

  it('rolls back by steps and by digest, dry or forced, and carries the entry each made', async () => {
    await client.deploy('back', images.v1!);
    await client.deploy('back', images.v2!);

    const dry = await client.rollback('back', { dryRun: true });
    expect(dry).toMatchObject({ name: 'back', digest: sha256(images.v1!), dry_run: true, replaced: true });
    expect(dry.entry).toBeUndefined();
    expect((await client.get('back')).digest).toBe(sha256(images.v2!));

    const back = await client.rollback('back', { steps: 1 });
    expect(back).toMatchObject({ name: 'back', digest: sha256(images.v1!), version: '0.1.0', replaced: true });
    expect(back.entry).toMatchObject({ action: 'rollback', forced: false, to: { digest: sha256(images.v1!), version: '0.1.0' } });
    expect((await client.get('back')).digest).toBe(sha256(images.v1!));

    const forward = await client.rollback('back', { to: sha256(images.v2!), force: true });
    expect(forward.digest).toBe(sha256(images.v2!));
    expect(forward.entry).toMatchObject({ action: 'rollback', forced: true, from: { digest: sha256(images.v1!) } });
    expect((await client.history('back', { limit: 1 })).entries).toEqual([forward.entry]);
  });

  it("answers bermd's refusals with their codes: not kept, already served, a malformed digest", async () => {
    await client.deploy('refusals', images.v1!);
    const none = await failure(client.rollback('refusals'));
    expect([none.code, none.status]).toEqual(['not-retained', 404]);
    const served = await failure(client.rollback('refusals', { to: sha256(images.v1!) }));
    expect([served.code, served.status]).toEqual(['already-serving', 409]);
    const unknown = await failure(client.rollback('refusals', { to: sha256(images.v2!) }));
    expect([unknown.code, unknown.body?.retained]).toEqual(['not-retained', []]);
    // Encoded into one path segment: a digest that is a path stays the digest bermd refuses.
    const malformed = await failure(client.retainedImage('refusals', '../../refusals'));
    expect([malformed.code, malformed.status]).toEqual(['bad-request', 400]);
    expect((await failure(client.images('never-deployed'))).code).toBe('not-found');
    expect((await failure(client.history('a.b'))).code).toBe('bad-name');
  });

  it('lists an undeployed name with the image an undo brings back, and the rollback that undoes it answers as a new deploy', async () => {
    await client.deploy('gone', images.v1!);
    await client.undeploy('gone');
    const listed = (await client.undeployed()).find((h) => h.name === 'gone');
    expect(listed).toMatchObject({ undeployed_by: 'anonymous', last: { digest: sha256(images.v1!), version: '0.1.0' } });
    expect((await client.history('gone', { limit: 1 })).entries[0]).toMatchObject({ action: 'undeploy', to: null });

    const undone = await client.rollback('gone');
    expect(undone).toMatchObject({ name: 'gone', digest: sha256(images.v1!), replaced: false });
    expect(undone.entry).toMatchObject({ action: 'rollback', from: null });
    expect((await client.undeployed()).map((h) => h.name)).not.toContain('gone');
    expect((await client.get('gone')).digest).toBe(sha256(images.v1!));
  });
});

describe('BermClient over https', () => {
  it('sends through the agent given, and says what failed when the certificate is not one it trusts', async () => {
    const dir = await tempDir('bermd-client-tls-');
    const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ]);
    const ca = await readFile(cert);
    const seen: Array<string | undefined> = [];
    const server = createHttpsServer({ key: await readFile(key), cert: ca }, (req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = new HttpsAgent({ ca, keepAlive: true });
    const trusting = new BermClient(url, { token: 'tok-tls', agent });
    const untrusting = new BermClient(url);
    try {
      expect(await trusting.list()).toEqual([]);
      expect(seen).toEqual(['Bearer tok-tls']);
      const e = await failure(untrusting.list());
      expect(e.code).toBe('connection-lost');
      expect(e.message).toContain('SELF_SIGNED');
      expect(seen).toHaveLength(1);
    } finally {
      await trusting.close();
      await untrusting.close();
      agent.destroy();
      server.close();
      await removeDir(dir);
    }
  });
});
