// The shared store suite, in one process: every kind of store (store-kinds.ts) held to the promises of
// deploy/store.ts, through the registry and through the store's own interface. Deploy, replace,
// undeploy, restore, usage and bindings here; crash safety, with real processes killed at each step, in
// store-crash.test.ts.
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  digestOf,
  emptyUsage,
  type HarnessMeta,
  type HarnessStore,
  type HistoryEntry,
  Registry,
  type StoredHead,
} from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { Manifest } from '@berm/manifest';
import { codeOf, ticking } from './core.js';
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
