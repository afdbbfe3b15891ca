// The daemon's core without a socket: deploy, list, replace, undeploy, restore, and the store on disk.
import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BermdError } from 'bermd';
import { digestOf, Registry } from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools, sampleManifest } from '../../../test/helpers/harness.js';
import { codeOf, ticking } from './core.js';
import { removeDir, tempDir } from './daemon.js';
import { refusals } from './refusals.js';
import { DEFAULT_LIMITS } from '../dist/limits.js';

const logger = pino({ level: 'silent' });
let stateDir: string;

beforeEach(async () => {
  stateDir = await tempDir('bermd-core-');
});
afterEach(async () => {
  await removeDir(stateDir);
});

const open = (now?: () => Date) => Registry.open({ stateDir, logger, now });
const storeDir = () => path.join(stateDir, 'harnesses');

describe('Registry', () => {
  it('deploys, lists, gets, serves the image and undeploys', async () => {
    const registry = await open(ticking());
    const bytes = await harnessImage(manifestWithTools(['echo', 'size']));
    const result = await registry.deploy('echo', bytes);
    expect(result).toEqual({
      name: 'echo',
      digest: digestOf(bytes),
      version: '0.1.0',
      tools: ['echo', 'size'],
      events: [],
      reported: [],
      notices: [],
      replaced: false,
      entry: {
        action: 'deploy',
        at: '2026-01-01T00:00:01.000Z',
        principal: null,
        replica: expect.any(String),
        from: null,
        to: { digest: digestOf(bytes), version: '0.1.0' },
        forced: false,
        forced_past: [],
        reported: [],
        notices: [],
      },
    });
    expect(registry.list()).toEqual([
      {
        name: 'echo',
        digest: digestOf(bytes),
        version: '0.1.0',
        tools: ['echo', 'size'],
        events: [],
        deployed_at: '2026-01-01T00:00:01.000Z',
        // A deploy that names no principal (this one, made in code) records none.
        deployed_by: null,
        last_used_at: null,
        // No bindings: the daemon's limits (the runtime's defaults here), and everything declared (nothing) granted.
        limits: { ...DEFAULT_LIMITS },
        grants: { syscalls: {}, secrets: [] },
        bindings: {},
      },
    ]);
    expect(registry.get('echo').manifest.tools.map((t) => t.name)).toEqual(['echo', 'size']);
    expect(Buffer.from(await registry.image('echo')).equals(Buffer.from(bytes))).toBe(true);
    expect(registry.harness('echo')!.module).toBeInstanceOf(WebAssembly.Module);

    await registry.undeploy('echo');
    expect(registry.list()).toEqual([]);
    expect(await codeOf(Promise.resolve().then(() => registry.get('echo')))).toBe('not-found');
    expect(await codeOf(registry.undeploy('echo'))).toBe('not-found');
    expect(await codeOf(registry.image('echo'))).toBe('not-found');
    expect(await readdir(storeDir())).toEqual([]);
  });

  it('replaces a harness and says so', async () => {
    const registry = await open(ticking());
    await registry.deploy('h', await harnessImage(manifestWithTools(['a'])));
    const next = await harnessImage(manifestWithTools(['a', 'b'], { version: '0.2.0' }));
    const result = await registry.deploy('h', next);
    expect(result.replaced).toBe(true);
    expect(registry.list().map((h) => [h.name, h.version, h.tools, h.digest])).toEqual([['h', '0.2.0', ['a', 'b'], digestOf(next)]]);
  });

  it('lists harnesses sorted by name', async () => {
    const registry = await open();
    const bytes = await harnessImage();
    for (const name of ['b', 'a-1', 'C_2']) await registry.deploy(name, bytes);
    expect(registry.list().map((h) => h.name)).toEqual(['C_2', 'a-1', 'b']);
  });

  it('refuses names outside the rule before looking at the image', async () => {
    const registry = await open();
    const bytes = await harnessImage();
    for (const name of ['a.b', '', 'x'.repeat(65), 'sp ace', 'sl/ash', '..']) {
      expect(await codeOf(registry.deploy(name, bytes))).toBe('bad-name');
    }
    await registry.deploy('x'.repeat(64), bytes);
  });

  it('leaves nothing behind when it refuses an image', async () => {
    const registry = await open();
    for (const c of refusals) {
      expect(await codeOf(registry.deploy('h', await c.image()))).toBe(c.code);
    }
    expect(registry.list()).toEqual([]);
    expect(await readdir(storeDir())).toEqual([]);
  });

  it('keeps the old harness when a replacement is refused', async () => {
    const registry = await open();
    const good = await harnessImage();
    await registry.deploy('h', good);
    expect(await codeOf(registry.deploy('h', await harnessImage(sampleManifest(), { omit: ['berm_alloc'] })))).toBe('missing-alloc');
    expect(registry.get('h').digest).toBe(digestOf(good));
    expect(Buffer.from(await registry.image('h')).equals(Buffer.from(good))).toBe(true);
  });

  it('notes declared programs that are not deployed, and carries on', async () => {
    const registry = await open();
    const manifest = sampleManifest({ deps: { programs: ['weather', 'inner', 'outer'], syscalls: {}, secrets: [] } });
    await registry.deploy('inner', await harnessImage());
    const result = await registry.deploy('outer', await harnessImage(manifest));
    expect(result.notices).toEqual([{ code: 'program-not-deployed', program: 'weather', message: expect.stringContaining('weather') }]);
    expect(registry.has('outer')).toBe(true);
  });

  it('runs deploys of one name one after another, in the order they came', async () => {
    const registry = await open();
    const images = await Promise.all([1, 2, 3, 4, 5].map((seed) => harnessImage(sampleManifest(), { padBytes: 64 * 1024, padSeed: seed })));
    const order: string[] = [];
    registry.onChange((e) => order.push(e.kind === 'deployed' ? `${e.replaced}` : 'undeployed'));
    const results = await Promise.all(images.map((bytes) => registry.deploy('h', bytes)));
    expect(results.map((r) => r.replaced)).toEqual([false, true, true, true, true]);
    expect(order).toEqual(['false', 'true', 'true', 'true', 'true']);
    expect(registry.get('h').digest).toBe(digestOf(images[4]!));
    expect(digestOf(await readFile(path.join(storeDir(), 'h.wasm')))).toBe(digestOf(images[4]!));
    expect((await readdir(storeDir())).sort()).toEqual(['h.json', 'h.wasm']);
  });

  it('restores what it stored, with its timestamps', async () => {
    const first = await open(ticking());
    const a = await harnessImage(manifestWithTools(['x']));
    const b = await harnessImage(manifestWithTools(['y', 'z']));
    await first.deploy('a', a);
    await first.deploy('b', b);
    first.recordUse('b', { tool: 'y' }, new Date(Date.UTC(2026, 5, 1)));
    const before = first.list();
    expect(before[1]!.last_used_at).toBe('2026-06-01T00:00:00.000Z');
    await first.close(); // writes the use recorded in memory

    const second = await open();
    expect(second.list()).toEqual(before);
    expect(second.usage('b')).toEqual({ tools: { y: '2026-06-01T00:00:00.000Z' }, events: {} });
    expect(second.skipped).toEqual([]);
  });

  it('keeps usage per name: across a replace and a metadata repair, not across an undeploy', async () => {
    const first = await open(ticking());
    await first.deploy('h', await harnessImage(manifestWithTools(['a', 'b'])));
    first.recordUse('h', { tool: 'a' }, new Date(Date.UTC(2026, 1, 1)));
    first.recordUse('h', { event: 'ping' }, new Date(Date.UTC(2026, 1, 2)));
    first.recordUse('h', { tool: 'b' }, new Date(Date.UTC(2026, 0, 5)));
    first.recordUse('nobody', { tool: 'a' });
    expect(first.get('h').last_used_at).toBe('2026-02-02T00:00:00.000Z');
    // Dropping b, which was used, takes force past the compatibility gate.
    await first.deploy('h', await harnessImage(manifestWithTools(['a'], { version: '0.2.0' })), { force: true });
    const expected = {
      tools: { a: '2026-02-01T00:00:00.000Z', b: '2026-01-05T00:00:00.000Z' },
      events: { ping: '2026-02-02T00:00:00.000Z' },
    };
    expect(first.usage('h')).toEqual(expected);
    expect(first.get('h').last_used_at).toBe('2026-02-02T00:00:00.000Z');
    await first.close();

    // A stop between the two renames: a new image beside the metadata of the old one.
    await writeFile(path.join(storeDir(), 'h.wasm'), await harnessImage(manifestWithTools(['c'])));
    const second = await open();
    expect(second.get('h').tools).toEqual(['c']);
    expect(second.usage('h')).toEqual(expected);

    await second.undeploy('h');
    await second.deploy('h', await harnessImage());
    expect(second.usage('h')).toEqual({ tools: {}, events: {} });
    expect(second.get('h').last_used_at).toBeNull();
  });

  it('skips a stored image that no longer loads and restores the rest', async () => {
    const first = await open();
    const good = await harnessImage();
    await first.deploy('good', good);
    await first.deploy('bad', good);
    await first.close();
    // Flip bytes in the middle of the stored image: it no longer compiles or reads.
    const badPath = path.join(storeDir(), 'bad.wasm');
    const stored = await readFile(badPath);
    await writeFile(badPath, stored.subarray(0, 20));

    const second = await open();
    expect(second.list().map((h) => h.name)).toEqual(['good']);
    expect(second.skipped.map((s) => s.name)).toEqual(['bad']);
    expect(second.skipped[0]!.code).toBe('bad-image');
  });

  it('derives metadata from the image when they disagree, as a stop between the two renames leaves them', async () => {
    const first = await open(ticking());
    await first.deploy('h', await harnessImage(manifestWithTools(['old'])));
    await first.close();
    // The new image renamed into place, the old metadata still beside it.
    const next = await harnessImage(manifestWithTools(['new']));
    const imagePath = path.join(storeDir(), 'h.wasm');
    await writeFile(imagePath, next);
    const mtime = new Date(Date.UTC(2026, 2, 3));
    await utimes(imagePath, mtime, mtime);

    const second = await open();
    const h = second.get('h');
    expect(h.digest).toBe(digestOf(next));
    expect(h.tools).toEqual(['new']);
    expect(h.deployed_at).toBe(mtime.toISOString());
    expect(h.last_used_at).toBeNull();
    const meta = JSON.parse(await readFile(path.join(storeDir(), 'h.json'), 'utf8'));
    expect(meta.digest).toBe(digestOf(next));
  });

  it('removes temp files and metadata without an image on open', async () => {
    const first = await open();
    await first.deploy('h', await harnessImage());
    await first.close();
    await writeFile(path.join(storeDir(), '.tmp-h-0123456789ab'), 'half an image');
    await writeFile(
      path.join(storeDir(), 'gone.json'),
      JSON.stringify({ name: 'gone', digest: 'sha256:00', deployed_at: 'x', last_used_at: null }),
    );

    const second = await open();
    expect(second.list().map((h) => h.name)).toEqual(['h']);
    expect((await readdir(storeDir())).sort()).toEqual(['h.json', 'h.wasm']);
  });

  it('stores images and metadata as whole files readable by anyone', async () => {
    const registry = await open();
    const bytes = await harnessImage();
    await registry.deploy('h', bytes);
    const meta = JSON.parse(await readFile(path.join(storeDir(), 'h.json'), 'utf8'));
    expect(meta).toEqual({
      name: 'h',
      digest: digestOf(bytes),
      deployed_at: registry.get('h').deployed_at,
      last_used_at: null,
      used: { tools: {}, events: {} },
      // The deploy's history entry, which travels with the metadata to the commit point.
      pending: {
        id: expect.any(String),
        entry: expect.objectContaining({ action: 'deploy', to: expect.objectContaining({ digest: digestOf(bytes) }) }),
      },
    });
    expect((await stat(path.join(storeDir(), 'h.wasm'))).size).toBe(bytes.length);
    expect((await stat(path.join(storeDir(), '..', 'history', 'h.json'))).mode & 0o444).toBe(0o444);
  });

  it('lets the layers that run tools prepare, refuse, follow and drop harnesses', async () => {
    const calls: string[] = [];
    const hooks = {
      prepare: (name: string, h: { bytes: Uint8Array; digest: string; manifest: { tools: { name: string }[] } }) => {
        calls.push(`prepare ${name} ${h.manifest.tools.map((t) => t.name).join(',')}`);
        expect(digestOf(h.bytes)).toBe(h.digest);
        if (name === 'vetoed') throw new BermdError('compile-error', 'the runtime cannot take this one');
        return `ready:${name}`;
      },
      commit: (name: string, prepared: unknown) => calls.push(`commit ${name} ${prepared}`),
      remove: (name: string) => calls.push(`remove ${name}`),
    };
    const first = await Registry.open({ stateDir, logger, hooks });
    await first.deploy('h', await harnessImage(manifestWithTools(['a'])));
    expect(await codeOf(first.deploy('vetoed', await harnessImage()))).toBe('compile-error');
    expect(first.has('vetoed')).toBe(false);
    expect((await readdir(storeDir())).sort()).toEqual(['h.json', 'h.wasm']);
    await first.deploy('k', await harnessImage(manifestWithTools(['b'])));
    await first.undeploy('k');
    expect(await codeOf(first.undeploy('k'))).toBe('not-found');
    await first.close();
    expect(calls).toEqual(['prepare h a', 'commit h ready:h', 'prepare vetoed echo', 'prepare k b', 'commit k ready:k', 'remove k']);

    calls.length = 0;
    await Registry.open({ stateDir, logger, hooks });
    expect(calls).toEqual(['prepare h a', 'commit h ready:h']);
  });

  it('finishes a deploy under way before it closes, then refuses new ones', async () => {
    const registry = await open();
    const deploying = registry.deploy('h', await harnessImage(sampleManifest(), { padBytes: 1 << 20 }));
    await registry.close();
    expect(registry.has('h')).toBe(true);
    await expect(deploying).resolves.toMatchObject({ name: 'h' });
    expect(await codeOf(registry.deploy('k', await harnessImage()))).toBe('shutting-down');
  });
});
