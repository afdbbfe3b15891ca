// The shared store suite, in one process: every kind of store (store-kinds.ts) held to the promises of
// deploy/store.ts, through the registry and through the store's own interface. Deploy, replace,
// undeploy, restore, usage and bindings here; crash safety, with real processes killed at each step, in
// store-crash.test.ts.
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BermdError } from 'bermd';
import {
  digestOf,
  emptyUsage,
  type HarnessMeta,
  type HarnessStore,
  type HistoryEntry,
  parseGrant,
  Registry,
  type RetentionPolicy,
  type StoredHead,
} from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools, sampleManifest } from '../../../test/helpers/harness.js';
import { Manifest } from '@berm/manifest';
import { codeOf, refusal, ticking } from './core.js';
import { sql } from './postgres.js';
import { STORE_KINDS, type StoreSite } from './store-kinds.js';

const logger = pino({ level: 'silent' });

const at = (iso: string): Date => new Date(iso);

describe.each(STORE_KINDS)('the $name store', (kind) => {
  let site: StoreSite;
  const opened: Array<{ close(): Promise<void> }> = [];

  beforeEach(async (context) => {
    if (kind.unavailable !== undefined) context.skip(kind.unavailable);
    site = await kind.site();
  });
  afterEach(async () => {
    for (const o of opened.splice(0)) await o.close().catch(() => {});
    await site?.dispose();
  });

  async function registry(now?: () => Date, breaksWindowMs?: number, replica = 'replica-a'): Promise<Registry> {
    // The store prunes by a clock of the same era as the registry's (a ticking clock moves on every read, so not the same one).
    const storeNow = now === undefined ? undefined : () => new Date(Date.UTC(2026, 0, 1));
    const r = await Registry.open({ stateDir: '', store: await site.open({ now: storeNow }), logger, now, breaksWindowMs, replica });
    opened.push(r);
    return r;
  }

  async function store(): Promise<HarnessStore> {
    const s = await site.open();
    opened.push(s);
    return s;
  }

  it('deploys, lists, serves the image and undeploys, leaving nothing stored', async () => {
    const r = await registry(ticking());
    const bytes = await harnessImage(manifestWithTools(['echo', 'size']));
    expect(await r.deploy('echo', bytes)).toMatchObject({ name: 'echo', digest: digestOf(bytes), replaced: false, reported: [] });
    expect(r.list()).toEqual([expect.objectContaining({ name: 'echo', deployed_at: '2026-01-01T00:00:01.000Z', last_used_at: null })]);
    expect(Buffer.from(await r.image('echo')).equals(Buffer.from(bytes))).toBe(true);
    expect(await site.raw()).toEqual(site.rawOf(['echo']));
    expect(await site.recordedDigest('echo')).toBe(digestOf(bytes));

    await r.undeploy('echo');
    expect(r.list()).toEqual([]);
    expect(await codeOf(r.undeploy('echo'))).toBe('not-found');
    expect(await site.raw()).toEqual([]);
  });

  it('replaces a harness, says so, and stores the new image alone', async () => {
    const r = await registry(ticking());
    await r.deploy('h', await harnessImage(manifestWithTools(['a'])));
    const next = await harnessImage(manifestWithTools(['a', 'b'], { version: '0.2.0' }));
    const result = await r.deploy('h', next);
    expect(result.replaced).toBe(true);
    expect(r.list().map((h) => [h.name, h.version, h.tools, h.digest])).toEqual([['h', '0.2.0', ['a', 'b'], digestOf(next)]]);
    expect(await site.raw()).toEqual(site.rawOf(['h']));
    expect(await site.recordedDigest('h')).toBe(digestOf(next));
    expect(digestOf((await (await store()).readImage('h'))!)).toBe(digestOf(next));
  });

  it('restores what it stored: images, deploy times, usage and bindings', async () => {
    const first = await registry(ticking());
    const a = await harnessImage(manifestWithTools(['x']));
    const b = await harnessImage(manifestWithTools(['y', 'z']));
    await first.deploy('a', a, { bindings: { timeout: 2000, max_result_size: 4096 } });
    await first.deploy('b', b);
    first.recordUse('b', { tool: 'y' }, at('2026-06-01T00:00:00.000Z'));
    first.recordUse('b', { event: 'ping' }, at('2026-06-02T00:00:00.000Z'));
    const before = first.list();
    expect(before[1]!.last_used_at).toBe('2026-06-02T00:00:00.000Z');
    await first.close(); // writes the uses recorded in memory

    const second = await registry();
    expect(second.list()).toEqual(before);
    expect(second.get('a').bindings).toEqual({ timeout: 2000, max_result_size: 4096 });
    expect(second.get('a').limits).toMatchObject({ timeout: 2000, max_result_size: 4096 });
    expect(second.usage('b')).toEqual({ tools: { y: '2026-06-01T00:00:00.000Z' }, events: { ping: '2026-06-02T00:00:00.000Z' } });
    expect(second.skipped).toEqual([]);
  });

  it('reads bindings stored under the names an earlier version wrote (timeout_ms, max_memory_bytes, max_result_bytes)', async () => {
    const first = await registry();
    await first.deploy('old', await harnessImage(manifestWithTools(['x'])));
    await first.close();
    // As the previous version stored them: each limit under its former key, beside one whose key is unchanged.
    await site.writeRawBindings('old', { timeout_ms: 2500, max_memory_bytes: 2 * 1024 * 1024, max_result_bytes: 4096, max_concurrency: 1 });
    const second = await registry();
    const expected = { timeout: 2500, max_memory: 2 * 1024 * 1024, max_result_size: 4096, max_concurrency: 1 };
    expect(second.get('old').bindings).toEqual(expected);
    expect(second.get('old').limits).toEqual(expected);
  });

  it('keeps bindings per deploy: a replace without them has the defaults, the same image with new ones has those', async () => {
    const r = await registry(ticking());
    const one = await harnessImage(manifestWithTools(['a']));
    const two = await harnessImage(manifestWithTools(['a'], { version: '0.2.0' }));
    await r.deploy('h', one, { bindings: { timeout: 3000 } });
    await r.deploy('h', two);
    expect(r.get('h').bindings).toEqual({});
    await r.deploy('h', two, { bindings: { max_result_size: 2048 } });
    await r.close();
    const again = await registry();
    expect(again.get('h')).toMatchObject({ digest: digestOf(two), bindings: { max_result_size: 2048 } });
    const head = (await (await store()).head('h')) as StoredHead;
    expect(head.digest).toBe(digestOf(two));
  });

  it('keeps usage per name: across a replace, not across an undeploy', async () => {
    const r = await registry(ticking());
    await r.deploy('h', await harnessImage(manifestWithTools(['a', 'b'])));
    r.recordUse('h', { tool: 'a' }, at('2026-02-01T00:00:00.000Z'));
    r.recordUse('h', { tool: 'b' }, at('2026-01-05T00:00:00.000Z'));
    // Dropping b, which was used, takes force past the compatibility gate.
    await r.deploy('h', await harnessImage(manifestWithTools(['a'], { version: '0.2.0' })), { force: true });
    const expected = { tools: { a: '2026-02-01T00:00:00.000Z', b: '2026-01-05T00:00:00.000Z' }, events: {} };
    expect(r.usage('h')).toEqual(expected);
    // The deploy wrote the usage it carried over with the image.
    expect((await (await store()).head('h'))?.used).toEqual(expected);

    await r.undeploy('h');
    await r.deploy('h', await harnessImage());
    expect(r.usage('h')).toEqual({ tools: {}, events: {} });
    expect(r.get('h').last_used_at).toBeNull();
    expect((await (await store()).head('h'))?.used).toEqual(emptyUsage());
  });

  it('refuses a redeploy that breaks a tool used within the window, leaving the stored harness as it was', async () => {
    const r = await registry(() => at('2026-03-01T00:00:00.000Z'));
    const old = await harnessImage(manifestWithTools(['a', 'b']));
    await r.deploy('h', old);
    r.recordUse('h', { tool: 'b' }, at('2026-02-27T00:00:00.000Z'));
    expect(await codeOf(r.deploy('h', await harnessImage(manifestWithTools(['a'], { version: '0.2.0' }))))).toBe('breaks-callers');
    expect(await site.recordedDigest('h')).toBe(digestOf(old));
    expect(r.get('h').digest).toBe(digestOf(old));
  });

  it('a dry run is gated against what is stored and writes nothing', async () => {
    const r = await registry(ticking());
    const old = await harnessImage(manifestWithTools(['a', 'b']));
    await r.deploy('h', old);
    const before = await (await store()).head('h');
    const result = await r.deploy('h', await harnessImage(manifestWithTools(['a'], { version: '0.2.0' })), { dryRun: true });
    expect(result).toMatchObject({ replaced: true, dry_run: true });
    expect(result.reported.map((b) => [b.code, b.tool])).toEqual([['tool-removed', 'b']]);
    expect(await (await store()).head('h')).toEqual(before);
    expect(r.get('h').digest).toBe(digestOf(old));
    expect(await site.raw()).toEqual(site.rawOf(['h']));
  });

  it('merges usage: each tool and event, and the last use, only ever move later; nothing is written for a name not stored', async () => {
    const s = await store();
    const bytes = await harnessImage(manifestWithTools(['a', 'b']));
    const meta: HarnessMeta = {
      name: 'h',
      digest: digestOf(bytes),
      deployed_at: '2026-01-01T00:00:00.000Z',
      last_used_at: null,
      used: emptyUsage(),
    };
    await s.transaction('h', (tx) => tx.save(bytes, meta, Manifest.fromImage(bytes).data, entryOf(bytes)));
    await s.saveUsage('h', { tools: { a: '2026-02-01T00:00:00.000Z' }, events: {} }, '2026-02-01T00:00:00.000Z');
    await s.saveUsage(
      'h',
      { tools: { a: '2026-01-15T00:00:00.000Z', b: '2026-01-20T00:00:00.000Z' }, events: { e: '2026-01-10T00:00:00.000Z' } },
      '2026-01-20T00:00:00.000Z',
    );
    expect(await s.head('h')).toEqual({
      name: 'h',
      digest: digestOf(bytes),
      revision: expect.any(String),
      last_used_at: '2026-02-01T00:00:00.000Z',
      used: { tools: { a: '2026-02-01T00:00:00.000Z', b: '2026-01-20T00:00:00.000Z' }, events: { e: '2026-01-10T00:00:00.000Z' } },
    });
    await s.saveUsage('gone', { tools: { a: '2026-02-01T00:00:00.000Z' }, events: {} }, '2026-02-01T00:00:00.000Z');
    expect(await s.head('gone')).toBeNull();
    expect(await site.raw()).toEqual(site.rawOf(['h']));
  });

  it('runs transactions on one name one after the other: the second sees what the first stored (two stores on one site, where it can be shared)', async () => {
    const a = await store();
    // The directory store belongs to one process: its transactions meet in one store.
    const b = kind.name === 'postgres' ? await store() : a;
    const first = await harnessImage(manifestWithTools(['a']));
    const meta = (bytes: Uint8Array): HarnessMeta => ({
      name: 'h',
      digest: digestOf(bytes),
      deployed_at: '2026-01-01T00:00:00.000Z',
      last_used_at: null,
      used: emptyUsage(),
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const holding = new Promise<void>((resolve) => (entered = resolve));
    const one = a.transaction('h', async (tx) => {
      entered();
      await held;
      await tx.save(first, meta(first), Manifest.fromImage(first).data, entryOf(first));
      return tx.current;
    });
    await holding;
    const two = b.transaction('h', async (tx) => tx.current);
    await waitingForHold(site, kind.name);
    release();
    expect(await one).toBeNull();
    expect((await two)?.digest).toBe(digestOf(first));
  });

  it("repairs a record naming another image from the image: its digest, the usage kept, the other image's bindings dropped, written back", async () => {
    const r = await registry(ticking());
    const bytes = await harnessImage(manifestWithTools(['a']));
    await r.deploy('h', bytes, { bindings: { timeout: 3000 } });
    r.recordUse('h', { tool: 'a' }, at('2026-02-01T00:00:00.000Z'));
    await r.close(); // writes the use
    const other = `sha256:${'0'.repeat(64)}`;
    await site.recordOtherImage('h', other);

    const s = await store();
    const loaded = await s.load('h');
    expect(loaded).toMatchObject({ digest: digestOf(bytes), repaired: true });
    expect(loaded!.meta).toMatchObject({
      name: 'h',
      digest: digestOf(bytes),
      used: { tools: { a: '2026-02-01T00:00:00.000Z' }, events: {} },
    });
    expect(loaded!.meta.bindings?.[digestOf(bytes)]).toBeUndefined();
    expect(loaded!.meta.bindings?.[other]).toBeUndefined();
    expect(await site.recordedDigest('h')).toBe(digestOf(bytes));
    expect((await s.load('h'))?.repaired).toBe(false);
    const again = await registry();
    expect(again.get('h')).toMatchObject({ digest: digestOf(bytes), bindings: {} });
  });

  it('keeps a history of every answered deploy and undeploy, newest first, past the undeploy', async () => {
    const r = await registry(ticking());
    const one = await harnessImage(manifestWithTools(['a', 'b'], { version: '0.1.0' }));
    const two = await harnessImage(manifestWithTools(['a'], { version: '0.2.0' }));
    await r.deploy('h', one, { by: 'alice' });
    r.recordUse('h', { tool: 'b' }, new Date(Date.UTC(2026, 0, 1)));
    expect(await codeOf(r.deploy('h', two, { by: 'bob' }))).toBe('breaks-callers');
    await r.deploy('h', two, { by: 'bob', dryRun: true, force: true });
    const forced = await r.deploy('h', two, { by: 'bob', force: true });
    await r.undeploy('h', { by: 'carol' });
    const { entries, next_cursor } = await r.history('h');
    expect(next_cursor).toBeNull();
    expect(entries.map((e) => [e.action, e.principal, e.replica, e.from?.version ?? null, e.to?.version ?? null, e.forced])).toEqual([
      ['undeploy', 'carol', 'replica-a', '0.2.0', null, false],
      ['deploy', 'bob', 'replica-a', '0.1.0', '0.2.0', true],
      ['deploy', 'alice', 'replica-a', null, '0.1.0', false],
    ]);
    const [gone, replaced, first] = entries as [HistoryEntry, HistoryEntry, HistoryEntry];
    expect(replaced.from?.digest).toBe(digestOf(one));
    expect(replaced.to?.digest).toBe(digestOf(two));
    expect(replaced.forced_past.map((b) => [b.code, b.tool])).toEqual([['tool-removed', 'b']]);
    expect(replaced.reported).toEqual(forced.reported);
    expect(replaced.notices).toEqual(forced.notices);
    expect(gone.from?.digest).toBe(digestOf(two));
    expect(first.at < replaced.at && replaced.at < gone.at).toBe(true);
    // A new process reads the same history from the store.
    expect((await (await store()).history('h')).entries).toEqual(entries);
    // A name never deployed has none; an undeploy of nothing adds none.
    expect(await codeOf(r.undeploy('h'))).toBe('not-found');
    expect((await r.history('h')).entries).toHaveLength(3);
    expect(await r.history('never')).toEqual({ entries: [], next_cursor: null });
  });

  it('pages history newest first with an opaque cursor, and refuses a cursor it did not give', async () => {
    const r = await registry(ticking());
    // Ten, so that positions of one digit and of two meet on one page.
    const versions = ['0.1.0', '0.2.0', '0.3.0', '0.4.0', '0.5.0', '0.6.0', '0.7.0', '0.8.0', '0.9.0', '0.10.0'];
    for (const version of versions) await r.deploy('h', await harnessImage(manifestWithTools(['a'], { version })));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await r.history('h', { cursor, limit: 4 });
      expect(page.entries.length).toBeLessThanOrEqual(4);
      seen.push(...page.entries.map((e) => e.to!.version!));
      cursor = page.next_cursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined && pages < 10);
    expect(seen).toEqual([...versions].reverse());
    expect(pages).toBe(3);
    expect((await r.history('h')).entries).toHaveLength(versions.length);
    expect(await codeOf(r.history('h', { cursor: 'not-a-cursor' }))).toBe('bad-request');
  });

  it('shares history between two processes on one store (PostgreSQL: two replicas)', async (context) => {
    if (kind.name !== 'postgres') context.skip('a state directory belongs to one process');
    const a = await registry(ticking(), undefined, 'replica-a');
    const b = await registry(ticking(Date.UTC(2026, 0, 2)), undefined, 'replica-b');
    const [one, two] = [await harnessImage(manifestWithTools(['a'])), await harnessImage(manifestWithTools(['a', 'b']))];
    await Promise.all([a.deploy('h', one, { by: 'alice' }), b.deploy('h', two, { by: 'bob' })]);
    const { entries } = await b.history('h');
    expect(entries.map((e) => e.replica).sort()).toEqual(['replica-a', 'replica-b']);
    // Serialised: the later entry replaced what the earlier one deployed.
    const [later, earlier] = entries as [HistoryEntry, HistoryEntry];
    expect(earlier.from).toBeNull();
    expect(later.from?.digest).toBe(earlier.to?.digest);
    expect((await a.history('h')).entries).toEqual(entries);
  });

  /**
   * A registry on a store keeping what `retention` says; the store prunes by the era of the registry's
   * ticking clock (2026) unless `retention.now` gives it a clock of its own.
   */
  async function keeping(retention: Partial<RetentionPolicy>, now: () => Date = ticking(), replica = 'replica-a'): Promise<Registry> {
    const s = await site.open({ now: () => new Date(Date.UTC(2026, 0, 1)), ...retention });
    const r = await Registry.open({ stateDir: '', store: s, logger, now, replica });
    opened.push(r);
    return r;
  }

  /** `count` images of distinct digests with the same tool, versions 0.1.0, 0.2.0, ... */
  function versions(count: number): Promise<Uint8Array[]> {
    return Promise.all(Array.from({ length: count }, (_, i) => harnessImage(manifestWithTools(['a'], { version: `0.${i + 1}.0` }))));
  }

  it('rolls back by digest and by steps, each image with the limits and grants it was deployed with', async () => {
    const r = await keeping({});
    const secrets = { programs: [], syscalls: {}, secrets: ['alpha', 'beta'] };
    const one = await harnessImage(manifestWithTools(['a'], { version: '0.1.0', deps: secrets }));
    const two = await harnessImage(manifestWithTools(['a'], { version: '0.2.0', deps: secrets }));
    const three = await harnessImage(manifestWithTools(['a'], { version: '0.3.0', deps: secrets }));
    await r.deploy('h', one, { bindings: { timeout: 2000, grants: [parseGrant('secret=alpha')] } });
    await r.deploy('h', two, { bindings: { max_result_size: 4096 } });
    await r.deploy('h', three);
    expect((await r.retained('h')).retained.map((i) => [i.digest, i.version])).toEqual([
      [digestOf(two), '0.2.0'],
      [digestOf(one), '0.1.0'],
    ]);

    const back = await r.rollback('h', { to: digestOf(one), by: 'alice' });
    expect(back).toMatchObject({ digest: digestOf(one), version: '0.1.0', replaced: true });
    expect(back.entry).toMatchObject({
      action: 'rollback',
      principal: 'alice',
      from: { digest: digestOf(three), version: '0.3.0' },
      to: { digest: digestOf(one), version: '0.1.0' },
      forced: false,
    });
    expect(r.get('h')).toMatchObject({
      digest: digestOf(one),
      bindings: { timeout: 2000, grants: { syscalls: {}, secrets: ['alpha'] } },
      limits: { timeout: 2000 },
      grants: { syscalls: {}, secrets: ['alpha'] },
    });
    // What is served is no longer among the kept; what it replaced is, most recently served first.
    expect((await r.retained('h')).retained.map((i) => i.digest)).toEqual([digestOf(three), digestOf(two)]);

    // Two steps back from 0.1.0: 0.3.0 was served before it, 0.2.0 before that.
    const further = await r.rollback('h', { steps: 2 });
    expect(further.entry).toMatchObject({ from: { digest: digestOf(one) }, to: { digest: digestOf(two), version: '0.2.0' } });
    expect(r.get('h')).toMatchObject({ digest: digestOf(two), bindings: { max_result_size: 4096 }, limits: { max_result_size: 4096 } });
    expect(r.get('h').grants).toEqual({ syscalls: {}, secrets: ['alpha', 'beta'] });
    // One step, the default: back to what was served just before.
    expect((await r.rollback('h')).digest).toBe(digestOf(one));

    // A new process finds the same thing served, with the same bindings, and the same history.
    const entries = (await r.history('h')).entries;
    expect(entries.map((e) => [e.action, e.to?.version])).toEqual([
      ['rollback', '0.1.0'],
      ['rollback', '0.2.0'],
      ['rollback', '0.1.0'],
      ['deploy', '0.3.0'],
      ['deploy', '0.2.0'],
      ['deploy', '0.1.0'],
    ]);
    await r.close();
    const again = await keeping({});
    expect(again.get('h')).toMatchObject({
      digest: digestOf(one),
      bindings: { timeout: 2000, grants: { syscalls: {}, secrets: ['alpha'] } },
    });
    expect((await again.history('h')).entries).toEqual(entries);
  });

  it('keeps the source each image was deployed from, and a rollback to it records that source again, across a restart', async () => {
    const r = await keeping({});
    const one = await harnessImage(manifestWithTools(['a'], { version: '0.1.0' }));
    const two = await harnessImage(manifestWithTools(['a'], { version: '0.2.0' }));
    const three = await harnessImage(manifestWithTools(['a'], { version: '0.3.0' }));
    const from = (n: number) => ({ reference: `oci://127.0.0.1:5000/org/h:0.${n}.0`, digest: `sha256:${String(n).repeat(64)}` });
    await r.deploy('h', one, { source: from(1) });
    await r.deploy('h', two);
    await r.deploy('h', three, { source: from(3) });
    expect((await r.retained('h')).retained.map((i) => [i.version, i.source])).toEqual([
      ['0.2.0', undefined],
      ['0.1.0', from(1)],
    ]);

    const back = await r.rollback('h', { to: digestOf(one) });
    expect(back.entry).toMatchObject({ action: 'rollback', source: from(1) });
    expect(r.get('h').source).toEqual(from(1));
    // What it replaced is kept with its own source, for a rollback forward again.
    expect((await r.retained('h')).retained[0]).toMatchObject({ digest: digestOf(three), source: from(3) });

    // An image deployed without one comes back without one: the source served before does not stay.
    const plain = await r.rollback('h', { to: digestOf(two) });
    expect(plain.entry?.source).toBeUndefined();
    expect(r.get('h').source).toBeUndefined();

    await r.close();
    const again = await keeping({});
    expect(again.get('h').source).toBeUndefined();
    const entries = (await again.history('h')).entries;
    expect(entries.map((e) => [e.action, e.to?.version, e.source])).toEqual([
      ['rollback', '0.2.0', undefined],
      ['rollback', '0.1.0', from(1)],
      ['deploy', '0.3.0', from(3)],
      ['deploy', '0.2.0', undefined],
      ['deploy', '0.1.0', from(1)],
    ]);
    expect((await again.rollback('h', { to: digestOf(three) })).entry?.source).toEqual(from(3));
    expect(again.get('h').source).toEqual(from(3));
  });

  it('refuses a rollback to what is served (already-serving) and to what is not kept (not-retained, naming what is)', async () => {
    const r = await keeping({});
    const [one, two] = await versions(2);
    expect(await codeOf(r.rollback('h'))).toBe('not-retained');
    await r.deploy('h', one!);
    const alone = await refusal(r.rollback('h'));
    expect([alone.code, alone.details]).toEqual(['not-retained', { name: 'h', retained: [] }]);
    expect(alone.message).toContain('it keeps no image besides the one it serves');
    await r.deploy('h', two!);

    const serving = await refusal(r.rollback('h', { to: digestOf(two!) }));
    expect([serving.code, serving.details]).toEqual(['already-serving', { name: 'h', digest: digestOf(two!) }]);
    const unknown = `sha256:${'1'.repeat(64)}`;
    const missing = await refusal(r.rollback('h', { to: unknown }));
    expect([missing.code, missing.details]).toEqual(['not-retained', { name: 'h', retained: [digestOf(one!)] }]);
    expect(missing.message).toContain(unknown);
    const tooFar = await refusal(r.rollback('h', { steps: 2 }));
    expect([tooFar.code, tooFar.details]).toEqual(['not-retained', { name: 'h', retained: [digestOf(one!)] }]);
    expect(await codeOf(r.retainedImage('h', unknown))).toBe('not-retained');
    // Nothing refused changed anything.
    expect(r.get('h').digest).toBe(digestOf(two!));
    expect((await r.history('h')).entries).toHaveLength(2);
  });

  it('gates a rollback: refused when the served image added a tool used since, forced past it, the entry saying what it broke', async () => {
    const r = await keeping({}, () => at('2026-03-01T00:00:00.000Z'));
    const one = await harnessImage(manifestWithTools(['a'], { version: '0.1.0' }));
    const two = await harnessImage(manifestWithTools(['a', 'b'], { version: '0.2.0' }));
    await r.deploy('h', one);
    await r.deploy('h', two);
    r.recordUse('h', { tool: 'b' }, at('2026-02-27T00:00:00.000Z'));
    expect(await codeOf(r.rollback('h'))).toBe('breaks-callers');
    expect(r.get('h').digest).toBe(digestOf(two));
    expect(await site.recordedDigest('h')).toBe(digestOf(two));
    expect((await r.history('h')).entries).toHaveLength(2);

    const forced = await r.rollback('h', { force: true, by: 'alice' });
    expect(forced.digest).toBe(digestOf(one));
    expect(forced.entry).toMatchObject({ action: 'rollback', forced: true, principal: 'alice' });
    expect(forced.entry?.forced_past.map((b) => [b.code, b.tool])).toEqual([['tool-removed', 'b']]);
    expect((await r.history('h')).entries[0]).toEqual(forced.entry);
    expect(await site.recordedDigest('h')).toBe(digestOf(one));
  });

  it('a dry-run rollback answers as the rollback would, and changes nothing: no entry, the same image served and kept', async () => {
    const r = await keeping({});
    const [one, two] = await versions(2);
    await r.deploy('h', one!, { bindings: { timeout: 2000 } });
    await r.deploy('h', two!);
    const s = await store();
    const [head, kept, history] = [await s.head('h'), await s.retained('h'), await s.history('h')];
    const result = await r.rollback('h', { dryRun: true });
    expect(result).toMatchObject({ digest: digestOf(one!), dry_run: true, replaced: true });
    expect(result).not.toHaveProperty('entry');
    expect(await s.head('h')).toEqual(head);
    expect(await s.retained('h')).toEqual(kept);
    expect(await s.history('h')).toEqual(history);
    expect(r.get('h')).toMatchObject({ digest: digestOf(two!), bindings: {} });
  });

  it('undoes an undeploy: the image it served comes back with its bindings, and the name is no longer listed as undeployed', async () => {
    const r = await keeping({});
    const [one, two] = await versions(2);
    await r.deploy('h', one!);
    await r.deploy('h', two!, { bindings: { timeout: 2500 } });
    await r.undeploy('h', { by: 'carol' });
    expect(r.has('h')).toBe(false);
    expect(await r.undeployed()).toEqual([
      { name: 'h', undeployed_at: expect.any(String), undeployed_by: 'carol', last: { digest: digestOf(two!), version: '0.2.0' } },
    ]);
    expect(await r.retained('h')).toMatchObject({ current: null, retained: [{ digest: digestOf(two!) }, { digest: digestOf(one!) }] });

    const undone = await r.rollback('h', { by: 'dave' });
    expect(undone).toMatchObject({ digest: digestOf(two!), replaced: false });
    expect(undone.entry).toMatchObject({ action: 'rollback', from: null, to: { digest: digestOf(two!), version: '0.2.0' } });
    expect(r.get('h')).toMatchObject({ digest: digestOf(two!), bindings: { timeout: 2500 }, limits: { timeout: 2500 } });
    expect(await r.undeployed()).toEqual([]);
    expect((await r.retained('h')).retained.map((i) => i.digest)).toEqual([digestOf(one!)]);
    expect((await r.history('h')).entries.map((e) => e.action)).toEqual(['rollback', 'undeploy', 'deploy', 'deploy']);
  });

  it('keeps --keep-images images besides the one served, the most recent, and nothing more stored; an undeployed name the one it served too', async () => {
    const images = await versions(6);
    const r = await keeping({ keepImages: 3 });
    for (const bytes of images) await r.deploy('h', bytes);
    const newestFirst = images.map((b) => digestOf(b)).reverse();
    expect((await r.retained('h')).retained.map((i) => i.digest)).toEqual(newestFirst.slice(1, 4));
    expect(await site.retainedRaw('h')).toEqual(newestFirst.slice(1, 4).sort());
    await r.undeploy('h');
    expect((await r.retained('h')).retained.map((i) => i.digest)).toEqual(newestFirst.slice(0, 4));
    expect(await site.retainedRaw('h')).toEqual(newestFirst.slice(0, 4).sort());
  });

  it('a lower --keep-images applies from the next start: what is past it is removed, the most recent kept', async () => {
    const images = await versions(4);
    const first = await keeping({ keepImages: 3 });
    for (const bytes of images) await first.deploy('h', bytes);
    expect(await site.retainedRaw('h')).toHaveLength(3);
    await first.close();
    const again = await keeping({ keepImages: 1 });
    expect((await again.retained('h')).retained.map((i) => i.version)).toEqual(['0.3.0']);
    expect(await site.retainedRaw('h')).toEqual([digestOf(images[2]!)]);
  });

  it('--keep-images 0 keeps no image besides the one served; an undeployed name still keeps the one it served, for an undo', async () => {
    const [one, two] = await versions(2);
    const r = await keeping({ keepImages: 0 });
    await r.deploy('h', one!);
    await r.deploy('h', two!);
    expect((await r.retained('h')).retained).toEqual([]);
    expect(await site.retainedRaw('h')).toEqual([]);
    expect(await codeOf(r.rollback('h'))).toBe('not-retained');
    await r.undeploy('h');
    expect((await r.retained('h')).retained.map((i) => i.digest)).toEqual([digestOf(two!)]);
    expect(await site.retainedRaw('h')).toEqual([digestOf(two!)]);
    // A prune keeps it too: the name is within retention.
    expect(await r.store.prune()).toEqual([]);
    expect(await site.retainedRaw('h')).toEqual([digestOf(two!)]);
    expect((await r.rollback('h')).digest).toBe(digestOf(two!));
    expect(await site.retainedRaw('h')).toEqual([]);
  });

  it('forgets history past --history-retention at the next write and at a prune, a deployed name keeping its newest entry', async () => {
    const clock = settable();
    const day = 24 * 60 * 60 * 1000;
    const r = await keeping({ historyRetentionMs: 10 * day, now: clock.now }, clock.now);
    const images = await versions(4);
    await r.deploy('a', images[0]!); // day 0
    await r.deploy('b', images[0]!);
    clock.advance(day);
    await r.deploy('a', images[1]!); // day 1
    await r.deploy('b', images[1]!);
    const versionsOf = async (name: string) => (await r.history(name)).entries.map((e) => e.to?.version);
    clock.advance(10 * day); // day 11: the day-0 entries are past retention
    expect(await versionsOf('a')).toEqual(['0.2.0', '0.1.0']);
    await r.deploy('a', images[2]!);
    expect(await versionsOf('a')).toEqual(['0.3.0', '0.2.0']);
    // b was not written: its old entry stays until a prune.
    expect(await versionsOf('b')).toEqual(['0.2.0', '0.1.0']);
    expect(await r.store.prune()).toEqual([]);
    expect(await versionsOf('b')).toEqual(['0.2.0']);

    clock.advance(100 * day); // everything past retention: each deployed name keeps its newest entry
    expect(await r.store.prune()).toEqual([]);
    expect(await versionsOf('a')).toEqual(['0.3.0']);
    expect(await versionsOf('b')).toEqual(['0.2.0']);
    // The images kept for a deployed name are bounded by --keep-images, not by age.
    expect((await r.retained('a')).retained.map((i) => i.version)).toEqual(['0.2.0', '0.1.0']);
  });

  it('forgets an undeployed name past --history-retention whole at a prune, history and images; within it, keeps it', async () => {
    const clock = settable();
    const day = 24 * 60 * 60 * 1000;
    const r = await keeping({ historyRetentionMs: 10 * day, now: clock.now }, clock.now);
    const [one, two] = await versions(2);
    await r.deploy('u', one!);
    clock.advance(day);
    await r.deploy('u', two!);
    clock.advance(day);
    await r.undeploy('u');
    clock.advance(9 * day); // the undeploy is 9 days old
    expect(await r.store.prune()).toEqual([]);
    expect((await r.undeployed()).map((u) => u.name)).toEqual(['u']);
    expect((await r.history('u')).entries.map((e) => e.action)).toEqual(['undeploy', 'deploy']);
    expect(await site.retainedRaw('u')).toEqual([digestOf(one!), digestOf(two!)].sort());

    clock.advance(2 * day); // 11 days
    expect(await r.store.prune()).toEqual(['u']);
    expect(await r.undeployed()).toEqual([]);
    expect(await r.history('u')).toEqual({ entries: [], next_cursor: null });
    expect(await site.retainedRaw('u')).toEqual([]);
    expect(await r.store.readRetained('u', digestOf(two!))).toBeNull();
    expect(await codeOf(r.retained('u'))).toBe('not-found');
    expect(await codeOf(r.rollback('u'))).toBe('not-retained');
    // Forgotten once: a second prune has nothing to forget.
    expect(await r.store.prune()).toEqual([]);
  });

  it('reads a kept image back byte for byte by its digest, the served one too', async () => {
    const r = await keeping({});
    const [one, two] = await Promise.all([1, 2].map((seed) => harnessImage(sampleManifest(), { padBytes: 256 * 1024, padSeed: seed })));
    await r.deploy('h', one!);
    await r.deploy('h', two!);
    expect(Buffer.from(await r.retainedImage('h', digestOf(one!))).equals(Buffer.from(one!))).toBe(true);
    expect(Buffer.from(await r.retainedImage('h', digestOf(two!))).equals(Buffer.from(two!))).toBe(true);
    const s = await store();
    expect(Buffer.from((await s.readRetained('h', digestOf(one!)))!).equals(Buffer.from(one!))).toBe(true);
  });

  it('never answers a kept image whose bytes were changed behind its back as that digest, nor rolls back to it', async () => {
    const r = await keeping({});
    const [one, two] = await versions(2);
    await r.deploy('h', one!);
    await r.deploy('h', two!);
    await site.corruptRetained('h', digestOf(one!));
    expect(await r.store.readRetained('h', digestOf(one!))).toBeNull();
    expect(await codeOf(r.retainedImage('h', digestOf(one!)))).toBe('not-retained');
    expect(await codeOf(r.rollback('h', { to: digestOf(one!) }))).toBe('not-retained');
    expect(r.get('h').digest).toBe(digestOf(two!));
    expect(await site.recordedDigest('h')).toBe(digestOf(two!));
  });

  it('serialises two rollbacks through two replicas: never both from the same image, the second from where the first left it', async (context) => {
    if (kind.name !== 'postgres') context.skip('a state directory belongs to one process');
    const a = await keeping({}, ticking(), 'replica-a');
    const b = await keeping({}, ticking(Date.UTC(2026, 0, 1, 12)), 'replica-b');
    const [one, two, three] = await versions(3);
    for (const bytes of [one!, two!, three!]) await a.deploy('h', bytes);

    // Different targets: both succeed, one after the other.
    const both = await Promise.all([a.rollback('h', { to: digestOf(one!) }), b.rollback('h', { to: digestOf(two!) })]);
    const [later, earlier] = (await a.history('h')).entries as [HistoryEntry, HistoryEntry];
    expect([earlier.action, later.action]).toEqual(['rollback', 'rollback']);
    expect(earlier.from?.digest).toBe(digestOf(three!));
    expect(later.from?.digest).toBe(earlier.to?.digest);
    const byReplica = (x: HistoryEntry, y: HistoryEntry): number => (x.replica < y.replica ? -1 : 1);
    expect(both.map((x) => x.entry as HistoryEntry).sort(byReplica)).toEqual([earlier, later].sort(byReplica));
    expect(await site.recordedDigest('h')).toBe(later.to?.digest);

    // The same target: the second finds it served and is refused.
    const target = digestOf(three!);
    const settled = await Promise.allSettled([a.rollback('h', { to: target }), b.rollback('h', { to: target })]);
    const done = settled.filter((s) => s.status === 'fulfilled');
    const refused = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
    expect(done).toHaveLength(1);
    expect(refused.map((s) => (s.reason as BermdError).code)).toEqual(['already-serving']);
    const entries = (await a.history('h')).entries;
    expect(entries).toHaveLength(6);
    expect(entries[0]).toMatchObject({ action: 'rollback', from: { digest: later.to?.digest }, to: { digest: target } });
  });

  it('orders kept images as they stopped being served, whatever the clocks of the replicas that replaced them say', async (context) => {
    if (kind.name !== 'postgres') context.skip('a state directory belongs to one process');
    // B's clock is a day behind A's: what B replaces later is stamped earlier.
    const a = await keeping({}, ticking(Date.UTC(2026, 0, 2)), 'replica-a');
    const b = await keeping({}, ticking(Date.UTC(2026, 0, 1)), 'replica-b');
    const [one, two, three] = await versions(3);
    await a.deploy('h', one!);
    await a.deploy('h', two!);
    await b.deploy('h', three!);
    expect((await b.retained('h')).retained.map((i) => i.version)).toEqual(['0.2.0', '0.1.0']);
    // One step back is the image served just before.
    expect((await b.rollback('h')).version).toBe('0.2.0');
    expect((await a.retained('h')).retained.map((i) => i.version)).toEqual(['0.3.0', '0.1.0']);
  });

  it('lists heads and names sorted as the registry sorts them', async () => {
    const r = await registry();
    const bytes = await harnessImage();
    for (const name of ['b', 'a-1', 'C_2']) await r.deploy(name, bytes);
    const s = await store();
    expect(await s.names()).toEqual(['C_2', 'a-1', 'b']);
    expect((await s.heads()).map((h) => h.name)).toEqual(['C_2', 'a-1', 'b']);
    expect(new Set((await s.heads()).map((h) => h.revision)).size).toBe(3);
  });
});

/** A clock that stands still until it is moved: what the store prunes by and the registry stamps entries with. */
function settable(start = Date.UTC(2026, 0, 1)): { now: () => Date; advance(ms: number): void } {
  let t = start;
  return {
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
  };
}

/** A history entry for a deploy of `bytes` made through the store's own interface. */
function entryOf(bytes: Uint8Array): HistoryEntry {
  const version = Manifest.fromImage(bytes).data.version;
  return {
    action: 'deploy',
    at: '2026-01-01T00:00:00.000Z',
    principal: null,
    replica: 'test',
    from: null,
    to: { digest: digestOf(bytes), version },
    forced: false,
    forced_past: [],
    reported: [],
    notices: [],
  };
}

/** Resolves once a second transaction waits for the hold the first has: on PostgreSQL, its advisory lock shows as not granted. */
async function waitingForHold(site: StoreSite, kind: string): Promise<void> {
  // The directory store's hold is a queue in this process: the second is queued behind the first as it is called.
  if (kind !== 'postgres') return;
  const url = site.start.store!;
  // Bounded, so a store that never makes the second wait fails here rather than at the test's time limit.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const rows = await sql<{ n: string }>(
      url,
      "SELECT count(*)::text AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    if (rows[0]!.n === '1') return;
  }
  throw new Error("the second transaction never waited for the first one's lock");
}
