// Who deployed each harness: the deploy's principal, kept by every kind of store (store-kinds.ts) through
// a usage write and a restart, unknown for a record from before bermd kept it or one derived again from
// its image; on PostgreSQL, a deploy through an earlier bermd (which moves the revision and writes no name)
// reads as unknown rather than as the deployer before it. Then real processes: a deploy through one replica
// is seen with its deployer on the other, and `bermd migrate-store` carries it.
import path from 'node:path';
import { Manifest } from '@berm/manifest';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestOf, type HarnessStore, PostgresStore, Registry } from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { as, bearer, writeAccess } from './access.js';
import { ticking } from './core.js';
import { exited, launchDaemon, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { deploy } from './mcp-client.js';
import { createDatabase, describePostgres, dropDatabase, sql } from './postgres.js';
import { NO_RECONCILIATION, startReplicas, stopAll, until, within } from './replicas.js';
import { STORE_KINDS, type StoreSite } from './store-kinds.js';

const logger = pino({ level: 'silent' });

describe.each(STORE_KINDS)('who deployed, in the $name store', (kind) => {
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

  async function registry(): Promise<Registry> {
    const r = await Registry.open({ stateDir: '', store: await site.open(), logger, now: ticking() });
    opened.push(r);
    return r;
  }

  async function store(): Promise<HarnessStore> {
    const s = await site.open();
    opened.push(s);
    return s;
  }

  /** Closes what is open, so the next `registry()` reads what the store holds. */
  async function closeAll(): Promise<void> {
    for (const o of opened.splice(0)) await o.close();
  }

  it("answers the deploying principal, keeps it through a usage write and a restart, and names the next deploy's", async () => {
    const one = await harnessImage(manifestWithTools(['a']));
    const two = await harnessImage(manifestWithTools(['a'], { version: '0.2.0' }));
    const r = await registry();
    await r.deploy('h', one, { by: 'alice' });
    expect(r.list().map((h) => [h.name, h.deployed_by])).toEqual([['h', 'alice']]);
    expect(r.get('h').deployed_by).toBe('alice');
    r.recordUse('h', { tool: 'a' });
    await closeAll(); // writes the use, rewriting the record beside it

    const again = await registry();
    expect(again.get('h')).toMatchObject({ deployed_by: 'alice', digest: digestOf(one) });
    expect(again.get('h').last_used_at).not.toBeNull();
    // A dry run stores nothing, its deployer included.
    await again.deploy('h', two, { by: 'carol', dryRun: true });
    expect(again.get('h').deployed_by).toBe('alice');
    await again.deploy('h', two, { by: 'bob' });
    expect(again.get('h').deployed_by).toBe('bob');
    await closeAll();

    const third = await registry();
    expect(third.get('h')).toMatchObject({ deployed_by: 'bob', digest: digestOf(two) });
    // A deploy that names no principal (one made in code) records none.
    await third.deploy('h', one);
    expect(third.get('h').deployed_by).toBeNull();
    await closeAll();
    expect((await registry()).get('h').deployed_by).toBeNull();
  });

  it('reads a record from before deployers were kept as unknown, and records the next deploy', async () => {
    const bytes = await harnessImage(manifestWithTools(['a']));
    await (await registry()).deploy('h', bytes, { by: 'alice' });
    await closeAll();
    await site.forgetDeployers('h');

    const r = await registry();
    expect(r.get('h')).toMatchObject({ digest: digestOf(bytes), deployed_by: null });
    await r.deploy('h', await harnessImage(manifestWithTools(['a', 'b'])), { by: 'bob' });
    await closeAll();
    expect((await registry()).get('h').deployed_by).toBe('bob');
  });

  it('a record derived again from its image names no deployer: the one it named deployed another image', async () => {
    const bytes = await harnessImage(manifestWithTools(['a']));
    await (await registry()).deploy('h', bytes, { by: 'alice' });
    await closeAll();
    await site.recordOtherImage('h', `sha256:${'0'.repeat(64)}`);

    const s = await store();
    const repaired = await s.load('h');
    expect(repaired).toMatchObject({ repaired: true, digest: digestOf(bytes) });
    expect(repaired!.meta.deployed_by).toBeUndefined();
    // Written back so: read again, it needs no repair and still names no one.
    const read = await s.load('h');
    expect(read).toMatchObject({ repaired: false });
    expect(read!.meta.deployed_by).toBeUndefined();
    await closeAll();
    expect((await registry()).get('h').deployed_by).toBeNull();
  });
});

describePostgres('who deployed, in PostgreSQL', { timeout: 120_000 }, () => {
  let db: string;
  beforeEach(async () => {
    db = await createDatabase();
  });
  afterEach(async () => {
    await dropDatabase(db);
  });

  it('a deploy through an earlier bermd (a new revision, no name written) reads as unknown, not as the deployer before it', async () => {
    const first = await Registry.open({ stateDir: '', store: await openStore(db), logger });
    const one = await harnessImage(manifestWithTools(['a']));
    await first.deploy('h', one, { by: 'alice' });
    await first.close();

    // The statement an earlier bermd's deploy sends: it knows nothing of deployed_by, and leaves it as it was.
    const two = await harnessImage(manifestWithTools(['a'], { version: '0.2.0' }));
    await sql(
      db,
      `INSERT INTO berm_harness (name, digest, image, manifest, bindings, deployed_at, last_used_at, revision)
       VALUES ($1, $2, $3, $4::jsonb, NULL, now(), NULL, nextval('berm_revision'))
       ON CONFLICT (name) DO UPDATE SET digest = excluded.digest, image = excluded.image, manifest = excluded.manifest,
         bindings = excluded.bindings, deployed_at = excluded.deployed_at, revision = excluded.revision`,
      ['h', digestOf(two), Buffer.from(two), JSON.stringify(Manifest.fromImage(two).data)],
    );
    expect(await sql(db, 'SELECT deployed_by FROM berm_harness')).toEqual([{ deployed_by: 'alice' }]);

    const second = await Registry.open({ stateDir: '', store: await openStore(db), logger });
    try {
      expect(second.get('h')).toMatchObject({ digest: digestOf(two), deployed_by: null });
    } finally {
      await second.close();
    }
  });
});

function openStore(url: string): Promise<HarnessStore> {
  return PostgresStore.open(url, { logger });
}

describePostgres('who deployed, across processes', { timeout: 120_000 }, () => {
  let db: string;
  let dir: string;
  const daemons: RunningDaemon[] = [];
  beforeEach(async () => {
    db = await createDatabase();
    dir = await tempDir('bermd-deployed-by-');
  });
  afterEach(async () => {
    await stopAll(daemons.splice(0));
    await dropDatabase(db);
    await removeDir(dir);
  });

  it('a deploy through one replica is listed with its deployer on the other, whose log names who', async () => {
    const access = await writeAccess(dir, [
      { name: 'alice', scopes: ['berm:read', 'berm:deploy'] },
      { name: 'bob', scopes: ['berm:read'] },
    ]);
    const [a, b] = await startReplicas(2, db, { args: [...NO_RECONCILIATION, '--access', access.file] });
    daemons.push(a!, b!);
    await deploy(a!.url, 'h', await harnessImage(), bearer(access.tokens.alice!));
    const seen = await until('h on B', async () => {
      const res = await as(access.tokens.bob, `${b!.url}/harnesses`);
      const list = (await res.json()) as { name: string; deployed_by: string | null }[];
      return list.length === 1 ? list : undefined;
    });
    expect(seen.map((h) => [h.name, h.deployed_by])).toEqual([['h', 'alice']]);
    const detail = (await (await as(access.tokens.bob, `${b!.url}/harnesses/h`)).json()) as { deployed_by: string };
    expect(detail.deployed_by).toBe('alice');
    const followed = await within(
      "B's log of the deploy it followed",
      b!.waitForLog((e) => e.msg === 'deployed harness (elsewhere)'),
    );
    expect(followed).toMatchObject({ harness: 'h', principal: 'alice' });
    expect(await a!.waitForLog((e) => e.msg === 'deployed harness')).toMatchObject({ harness: 'h', principal: 'alice' });
  });

  it('bermd migrate-store carries who deployed each harness into the database', async () => {
    const access = await writeAccess(dir, [{ name: 'alice', scopes: ['berm:read', 'berm:deploy'] }]);
    const stateDir = path.join(dir, 'state');
    const onDisk = await startDaemon({ stateDir, args: ['--access', access.file] });
    daemons.push(onDisk);
    await deploy(onDisk.url, 'h', await harnessImage(), bearer(access.tokens.alice!));
    expect(await onDisk.stop()).toBe(0);

    const move = await launchDaemon({ command: ['migrate-store', '--from', stateDir, '--to', db] });
    expect(await exited(move.process)).toBe(0);
    expect(await sql(db, 'SELECT name, deployed_by FROM berm_harness')).toEqual([{ name: 'h', deployed_by: 'alice' }]);

    const onDb = await startDaemon({ store: db, args: ['--access', access.file] });
    daemons.push(onDb);
    const list = (await (await as(access.tokens.alice, `${onDb.url}/harnesses`)).json()) as { deployed_by: string }[];
    expect(list.map((h) => h.deployed_by)).toEqual(['alice']);
  });
});
