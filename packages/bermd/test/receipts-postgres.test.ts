// Receipts shared by two bermd replicas on one PostgreSQL: a key sent to both, once after the other and
// five times at once, writes once upstream, every answer the same and all but one marked replayed; other
// arguments are refused on either; a replica killed (-9) in the middle of a write leaves a receipt the other
// takes over once the attempt's time limit has passed, by the tool's retry mode; receipts past the
// retention go at a prune given a time.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresReceipts } from '../dist/deploy/postgres-receipts.js';
import { REPLAYED_META } from '../dist/mcp/index.js';
import type { RunningDaemon } from './daemon.js';
import { connect, type McpConnection } from './mcp-client.js';
import { createDatabase, describePostgres, dropDatabase, sql } from './postgres.js';
import { RemoteHost, resolvedTo } from './remote.js';
import { listed, NO_RECONCILIATION, startReplicas, stopAll, until } from './replicas.js';
import { shopImage, UPSTREAM, codeOf, unmarked, writeArgs, callWithKey } from './receipts-guest.js';

describePostgres('receipts shared by two replicas on PostgreSQL', () => {
  let db: string;
  let remote: RemoteHost;
  let replicas: RunningDaemon[];
  let conns: McpConnection[];
  let url: string;
  const args = (path: string, order: string) => writeArgs(url, path, order);
  const writesWith = (key: string) => remote.seen.filter((s) => s.headers['idempotency-key'] === key);
  const call = callWithKey;

  beforeAll(async () => {
    db = await createDatabase();
    remote = await RemoteHost.start();
    url = `http://${UPSTREAM}:${remote.port}`;
    remote
      .route('/orders', (_req, res, seen) => res.end(JSON.stringify({ placed: seen.body, n: remote.seen.length })))
      .route('/lookup', (_req, res) => res.end(`lookup-${remote.seen.length}`))
      .hold('/hold');
    // Three writes are held at once when a replica is killed: each needs a worker of its own.
    replicas = await startReplicas(2, db, {
      args: ['--serve', 'berm.http.fetch', '--max-concurrency', '4', ...resolvedTo(remote, UPSTREAM), ...NO_RECONCILIATION],
    });
    // A short time limit: an attempt older than it is over, which is how the survivor knows the killed one's.
    const res = await fetch(`${replicas[0]!.url}/harnesses/shop?timeout=1500ms`, {
      method: 'PUT',
      body: await shopImage(`${UPSTREAM}:${remote.port}`),
    });
    expect(res.status).toBe(201);
    await until('the second replica serves shop', async () => ((await listed(replicas[1]!)).includes('shop') ? true : undefined));
    conns = await Promise.all(replicas.map((d) => connect(d.url)));
  });
  afterAll(async () => {
    await Promise.all((conns ?? []).map((c) => c.close().catch(() => {})));
    if (replicas) await stopAll(replicas);
    await remote?.close();
    if (db) await dropDatabase(db);
  });

  it('writes once for a key sent to one replica then the other, and five times at once to both', async () => {
    const first = await call(conns[0]!, 'shop.place', args('/orders', 'a'), 'pg-twice');
    const second = await call(conns[1]!, 'shop.place', args('/orders', 'a'), 'pg-twice');
    expect(first._meta?.[REPLAYED_META]).toBeUndefined();
    expect(second._meta?.[REPLAYED_META]).toBe(true);
    expect(unmarked(second)).toEqual(unmarked(first));
    expect(writesWith('pg-twice')).toHaveLength(1);

    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => call(conns[i % 2]!, 'shop.place', args('/orders', 'b'), 'pg-five')),
    );
    expect(writesWith('pg-five')).toHaveLength(1);
    expect(answers.filter((a) => a._meta?.[REPLAYED_META] === true)).toHaveLength(4);
    for (const a of answers) expect(unmarked(a)).toEqual(unmarked(answers[0]!));

    const other = await call(conns[1]!, 'shop.place', args('/orders', 'other'), 'pg-twice');
    expect(codeOf(other)).toBe('idempotency-key-reused');
    expect(writesWith('pg-twice')).toHaveLength(1);
  });

  it('takes over a write a killed replica left, by the retry mode: run again with the key, ask the reconcile tool, or refuse outcome-unknown', async () => {
    const before = remote.seen.length;
    const place = call(conns[0]!, 'shop.place', args('/hold', 'c'), 'pg-killed').catch(() => undefined);
    const notify = call(conns[0]!, 'shop.notify', args('/hold', 'd'), 'pg-notify').catch(() => undefined);
    const settle = call(conns[0]!, 'shop.settle', args('/hold', 'e'), 'pg-settle').catch(() => undefined);
    await remote.received(before + 3);
    await replicas[0]!.stop('SIGKILL');
    await Promise.all([place, notify, settle]);
    remote.route('/hold', (_req, res) => res.end('{"placed":"again"}'));

    const retried = await call(conns[1]!, 'shop.place', args('/hold', 'c'), 'pg-killed');
    expect(retried.isError).toBeFalsy();
    expect(writesWith('pg-killed')).toHaveLength(2);
    const unknown = await call(conns[1]!, 'shop.notify', args('/hold', 'd'), 'pg-notify');
    expect(codeOf(unknown)).toBe('outcome-unknown');
    expect(writesWith('pg-notify')).toHaveLength(1);
    // reconcile: the survivor asks the reconcile tool (found: done), whose answer is the write's, sent once.
    const settled = await call(conns[1]!, 'shop.settle', args('/hold', 'e'), 'pg-settle');
    expect(settled.isError).toBeFalsy();
    const lookups = remote.seen.filter((s) => s.url === '/lookup' && s.headers['idempotency-key'] === 'pg-settle');
    expect(lookups).toHaveLength(1);
    expect(JSON.stringify(settled.content)).toContain(`lookup-${remote.seen.indexOf(lookups[0]!) + 1}`);
    expect(remote.seen.filter((s) => s.url === '/hold' && s.headers['idempotency-key'] === 'pg-settle')).toHaveLength(1);
    const rows = await sql<{ state: string; replica: string }>(db, "SELECT state, replica FROM berm_receipt WHERE key = 'pg-killed'");
    expect(rows).toEqual([{ state: 'completed', replica: expect.any(String) }]);
  });

  it('forgets receipts past the retention at a prune given a time, and keeps those within it', async () => {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    try {
      const receipts = new PostgresReceipts((text, values) => client.query(text, values), 60 * 60 * 1000);
      const held = Number((await sql<{ n: string }>(db, 'SELECT count(*) AS n FROM berm_receipt'))[0]!.n);
      expect(held).toBeGreaterThan(0);
      expect(await receipts.prune(new Date(Date.now() + 30 * 60 * 1000))).toBe(0);
      expect(await receipts.prune(new Date(Date.now() + 2 * 60 * 60 * 1000))).toBe(held);
      expect(await receipts.list('shop')).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
