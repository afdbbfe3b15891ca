// Receipts of external writes on the directory store, end to end: a real bermd, the official SDK client,
// and a stand-in upstream that records every write with its Idempotency-Key. The same key twice and five
// times at once writes once, every answer the same and the later ones marked replayed; other arguments
// with the key are refused; a kill -9 in the middle of a write is retried by the tool's retry mode; the
// receipts survive a restart; an answer over the result limit is recorded without its body.
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_KEY_META, REPLAYED_META } from '../dist/mcp/index.js';
import { nestedKey } from '../dist/runtime/index.js';
import { DirectoryReceipts, type Receipt } from '../dist/deploy/index.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, connectModern, deploy, type McpConnection } from './mcp-client.js';
import { RemoteHost, resolvedTo } from './remote.js';
import { shopImage, UPSTREAM, codeOf, unmarked, writeArgs, callWithKey, type Answer } from './receipts-guest.js';

describe('receipts on the directory store', () => {
  let remote: RemoteHost;
  let d: RunningDaemon;
  let c: McpConnection;
  let stateDir: string;
  let url: string;
  const args = (path: string, order: string) => writeArgs(url, path, order);
  const daemonArgs = () => ['--serve', 'berm.http.fetch', ...resolvedTo(remote, UPSTREAM), '--call-timeout', '30s'];
  /** The writes the upstream received with `key`. */
  const writesWith = (key: string) => remote.seen.filter((s) => s.headers['idempotency-key'] === key);
  const call = callWithKey;

  beforeAll(async () => {
    remote = await RemoteHost.start();
    url = `http://${UPSTREAM}:${remote.port}`;
    remote
      .route('/orders', (_req, res, seen) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ placed: seen.body, n: remote.seen.length }));
      })
      .route('/big', (_req, res) => res.end('"'.repeat(3000)))
      .hold('/hold');
    stateDir = await tempDir('bermd-receipts-');
    d = await startDaemon({ stateDir, args: daemonArgs() });
    await deploy(d.url, 'shop', await shopImage(`${UPSTREAM}:${remote.port}`));
    c = await connect(d.url);
  });
  afterAll(async () => {
    await c?.close();
    await d?.stop();
    await remote?.close();
    if (stateDir) await removeDir(stateDir);
  });

  it('writes once for a key sent twice, the second answer the first one replayed', async () => {
    const first = await call(c, 'shop.place', args('/orders', 'a'), 'key-twice');
    const second = await call(c, 'shop.place', args('/orders', 'a'), 'key-twice');
    expect(first.isError).toBeFalsy();
    expect(first._meta?.[REPLAYED_META]).toBeUndefined();
    expect(first._meta?.[IDEMPOTENCY_KEY_META]).toBe('key-twice');
    expect(second._meta?.[REPLAYED_META]).toBe(true);
    expect(unmarked(second)).toEqual(unmarked(first));
    expect(writesWith('key-twice')).toHaveLength(1);
  });

  it('writes once for a key sent five times at once; one answer is the write, four replay it', async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => call(c, 'shop.place', args('/orders', 'b'), 'key-five')));
    expect(writesWith('key-five')).toHaveLength(1);
    expect(answers.filter((a) => a._meta?.[REPLAYED_META] === true)).toHaveLength(4);
    for (const a of answers) expect(unmarked(a)).toEqual(unmarked(answers[0]!));
  });

  it('replays to the other generation too, and refuses the key with other arguments, sending nothing', async () => {
    const first = await call(c, 'shop.place', args('/orders', 'c'), 'key-reused');
    const modern = await connectModern(d.url);
    const again = (await modern.client.callTool({
      name: 'shop.place',
      arguments: args('/orders', 'c'),
      _meta: { [IDEMPOTENCY_KEY_META]: 'key-reused' },
    })) as Answer;
    expect(again._meta?.[REPLAYED_META]).toBe(true);
    expect(again.content).toEqual(first.content);
    const other = await call(c, 'shop.place', args('/orders', 'other'), 'key-reused');
    expect(other.isError).toBe(true);
    expect(codeOf(other)).toBe('idempotency-key-reused');
    expect(JSON.stringify(other.content)).toContain('with other arguments');
    expect(writesWith('key-reused')).toHaveLength(1);
  });

  it('makes a key for a call that sends none: each call writes, under a key of its own', async () => {
    const one = await call(c, 'shop.place', args('/orders', 'd'));
    const two = await call(c, 'shop.place', args('/orders', 'd'));
    const k1 = one._meta?.[IDEMPOTENCY_KEY_META] as string;
    const k2 = two._meta?.[IDEMPOTENCY_KEY_META] as string;
    expect(k1).not.toBe(k2);
    expect(writesWith(k1)).toHaveLength(1);
    expect(writesWith(k2)).toHaveLength(1);
    expect(two._meta?.[REPLAYED_META]).toBeUndefined();
  });

  it('refuses a key longer than --max-idempotency-key, or not a string, before anything runs', async () => {
    const before = remote.seen.length;
    const long = await call(c, 'shop.place', args('/orders', 'e'), 'k'.repeat(257));
    expect(codeOf(long)).toBe('bad-idempotency-key');
    expect(JSON.stringify(long.content)).toContain('1 to 256 bytes');
    const number = (await c.client.callTool({
      name: 'shop.place',
      arguments: args('/orders', 'e'),
      _meta: { [IDEMPOTENCY_KEY_META]: 7 },
    })) as Answer;
    expect(codeOf(number)).toBe('bad-idempotency-key');
    expect(remote.seen.length).toBe(before);
  });

  it("gives the guest its key (berm.idempotency_key), and a chain derives its nested calls' keys from it", async () => {
    const own = await call(c, 'shop.key', {}, 'key-own');
    expect(JSON.parse((own.content[0] as { text: string }).text)).toEqual({ ok: 'key-own' });
    const chained = await call(c, 'shop.chain', { program: 'shop', tool: 'key', args: {} }, 'key-chain');
    // chain's value is berm.call's envelope, whose value is key's: {"ok": <its key>}.
    const nested = JSON.parse((chained.content[0] as { text: string }).text) as { ok: { ok: string } };
    expect(nested.ok.ok).toBe(nestedKey('key-chain', 0, 'shop', 'key'));
    const other = await call(c, 'shop.chain', { program: 'shop', tool: 'key', args: {} }, 'key-chain-2');
    expect(JSON.parse((other.content[0] as { text: string }).text).ok.ok).toBe(nestedKey('key-chain-2', 0, 'shop', 'key'));
  });

  it('keeps no receipt for a tool of undeclared effect, nor gives it a key', async () => {
    const plain = await call(c, 'shop.plain', { ...args('/orders', 'f'), headers: {} }, 'key-plain');
    expect(plain._meta?.[IDEMPOTENCY_KEY_META]).toBeUndefined();
    const again = await call(c, 'shop.plain', { ...args('/orders', 'f'), headers: {} }, 'key-plain');
    expect(again._meta?.[REPLAYED_META]).toBeUndefined();
  });

  it('records an answer over the result limit without its body, and refuses to replay it', async () => {
    const res = await fetch(`${d.url}/harnesses/tight?max_result_size=8K`, {
      method: 'PUT',
      body: await shopImage(`${UPSTREAM}:${remote.port}`),
    });
    expect(res.status).toBe(201);
    const first = await call(c, 'tight.place', { ...args('/big', 'g'), method: 'GET', body: undefined }, 'key-big');
    expect(first.isError).toBeFalsy();
    const second = await call(c, 'tight.place', { ...args('/big', 'g'), method: 'GET', body: undefined }, 'key-big');
    expect(codeOf(second)).toBe('result-not-kept');
    expect(JSON.stringify(second.content)).toContain('result limit');
    expect(writesWith('key-big')).toHaveLength(1);
  });

  it('keeps its receipts over a restart, and retries a write a kill -9 cut by its retry mode', async () => {
    await call(c, 'shop.place', args('/orders', 'h'), 'key-restart');
    // A write held upstream until the daemon is killed: one of each retry mode.
    const held = remote.seen.length;
    const place = call(c, 'shop.place', args('/hold', 'i'), 'key-killed').catch(() => undefined);
    const notify = call(c, 'shop.notify', args('/hold', 'j'), 'key-notify').catch(() => undefined);
    await remote.received(held + 2);
    await d.stop('SIGKILL');
    await Promise.all([place, notify]);
    await c.close().catch(() => {});
    remote.route('/hold', (_req, res) => res.end('{"placed":"late"}'));

    d = await startDaemon({ stateDir, args: daemonArgs() });
    c = await connect(d.url);
    const replayed = await call(c, 'shop.place', args('/orders', 'h'), 'key-restart');
    expect(replayed._meta?.[REPLAYED_META]).toBe(true);
    expect(writesWith('key-restart')).toHaveLength(1);

    // idempotency_key: run again with the same key, which the upstream deduplicates by.
    const retried = await call(c, 'shop.place', args('/hold', 'i'), 'key-killed');
    expect(retried.isError).toBeFalsy();
    expect(retried._meta?.[REPLAYED_META]).toBeUndefined();
    expect(writesWith('key-killed')).toHaveLength(2);
    // none: it may have written, so nothing runs.
    const unknown = await call(c, 'shop.notify', args('/hold', 'j'), 'key-notify');
    expect(codeOf(unknown)).toBe('outcome-unknown');
    expect(JSON.stringify(unknown.content)).toMatch(/at \d{4}-\d\d-\d\dT/);
    expect(writesWith('key-notify')).toHaveLength(1);
  });
});

describe('DirectoryReceipts', () => {
  const receiptOf = (key: string, at = '2030-01-01T00:00:00Z'): Receipt => ({
    principal: 'p',
    harness: 'shop',
    tool: 'place',
    key,
    args_sha256: 'x',
    state: 'started',
    started_at: at,
    replica: 'r',
    attempt: `a-${key}`,
    generated: false,
    completed_at: null,
    outcome: null,
    code: null,
    answer: null,
    answer_kept: true,
  });

  it('reads its journal back at open, dropping a last line a stop cut short, and writes on after it', async () => {
    const dir = await tempDir('bermd-receipts-journal-');
    const first = new DirectoryReceipts(dir);
    await first.open();
    // Written together: they share the journal's syncs, and each is there once the call resolves.
    expect(await Promise.all(['a', 'b', 'c'].map((k) => first.begin(receiptOf(k))))).toEqual([null, null, null]);
    const done = { ...receiptOf('a'), state: 'completed' as const, completed_at: '2030-01-01T00:00:01Z', outcome: 'ok' as const };
    expect(await first.complete(done)).toBe(true);
    await first.forget(receiptOf('c'), 'a-c');
    await first.close();
    // A stop in the middle of a write leaves its line cut short.
    await appendFile(path.join(dir, 'journal.jsonl'), '{"put":{"principal":"p","harness":"shop","tool":"pl');

    const second = new DirectoryReceipts(dir);
    await second.open();
    expect((await second.read(receiptOf('a')))?.state).toBe('completed');
    expect((await second.read(receiptOf('b')))?.state).toBe('started');
    expect(await second.read(receiptOf('c'))).toBeNull();
    expect(await second.begin(receiptOf('d'))).toBeNull();
    await second.close();

    const third = new DirectoryReceipts(dir);
    await third.open();
    expect((await third.list('shop')).map((r) => r.key).sort()).toEqual(['a', 'b', 'd']);
    await third.close();
    await removeDir(dir);
  });

  it('forgets receipts past the retention by the clock it is given, and keeps the others', async () => {
    const dir = await tempDir('bermd-receipts-unit-');
    let now = new Date('2030-01-01T00:00:00Z');
    const store = new DirectoryReceipts(dir, 60 * 60 * 1000, () => now);
    await store.open();
    expect(await store.begin(receiptOf('old', '2029-12-31T22:30:00Z'))).toBeNull();
    expect(await store.begin(receiptOf('new', '2029-12-31T23:30:00Z'))).toBeNull();
    expect((await store.begin(receiptOf('new', '2029-12-31T23:31:00Z')))?.attempt).toBe('a-new');
    expect(await store.prune()).toBe(1);
    expect((await store.list('shop')).map((r) => r.key)).toEqual(['new']);
    now = new Date('2030-01-01T01:00:01Z');
    expect(await store.prune()).toBe(1);
    expect(await store.list('shop')).toEqual([]);
    await removeDir(dir);
  });
});
