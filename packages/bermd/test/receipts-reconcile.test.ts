// Receipts, continued, on the directory store: a write of retry mode `reconcile` cut by a kill -9 is
// retried by asking its reconcile tool (done: its result recorded and answered, nothing written again; not
// done: the write runs again), a second call with the key of a write still running is answered
// `in-progress` once its own time limit is spent, and a deploy refuses a reconcile tool whose declared
// returns cannot say {"done": boolean}. A real bermd, the official SDK client, a stand-in upstream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_KEY_META, REPLAYED_META } from '../dist/mcp/index.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, deploy, type McpConnection } from './mcp-client.js';
import { RemoteHost, resolvedTo } from './remote.js';
import { shopImage, UPSTREAM, codeOf, writeArgs, callWithKey, type Answer } from './receipts-guest.js';

function textOf(result: Answer): string {
  return (result.content[0] as { text: string }).text;
}

describe('receipts: reconcile, in-progress, and the reconcile answer checked at deploy', () => {
  let remote: RemoteHost;
  let d: RunningDaemon;
  let c: McpConnection;
  let stateDir: string;
  let url: string;
  const upstream = () => `${UPSTREAM}:${remote.port}`;
  const args = (path: string, order: string) => writeArgs(url, path, order);
  const daemonArgs = () => ['--serve', 'berm.http.fetch', ...resolvedTo(remote, UPSTREAM), '--call-timeout', '30s'];
  /** The requests to `path` the upstream received with `key`. */
  const seenWith = (path: string, key: string) => remote.seen.filter((s) => s.url === path && s.headers['idempotency-key'] === key);
  const call = callWithKey;

  beforeAll(async () => {
    remote = await RemoteHost.start();
    url = `http://${UPSTREAM}:${remote.port}`;
    // Every answer names the request it answers, so a test can tell which request's envelope it got.
    remote
      .route('/lookup', (_req, res) => res.end(`lookup-${remote.seen.length}`))
      .hold('/hold')
      .hold('/wait');
    stateDir = await tempDir('bermd-receipts-reconcile-');
    d = await startDaemon({ stateDir, args: daemonArgs() });
    await deploy(d.url, 'shop', await shopImage(upstream()));
    c = await connect(d.url);
  });
  afterAll(async () => {
    await c?.close();
    await d?.stop();
    await remote?.close();
    if (stateDir) await removeDir(stateDir);
  });

  it('answers in-progress to a second call with the key while the first is held, once its own time limit is spent', async () => {
    await deploy(d.url, 'slow', await shopImage(upstream()));
    const before = remote.seen.length;
    const first = call(c, 'slow.place', args('/wait', 'p'), 'key-held');
    await remote.received(before + 1);
    // The second call's time limit: the harness is deployed again with one second; the first call goes
    // on under the limit it started with.
    const redeployed = await fetch(`${d.url}/harnesses/slow?timeout=1s`, { method: 'PUT', body: await shopImage(upstream()) });
    expect(redeployed.status).toBe(200);
    const second = await call(c, 'slow.place', args('/wait', 'p'), 'key-held');
    expect(codeOf(second)).toBe('in-progress');
    expect(second.isError).toBe(true);
    expect(second._meta?.[IDEMPOTENCY_KEY_META]).toBe('key-held');
    expect(textOf(second)).toContain('still running');
    expect(textOf(second)).toContain('1000 ms');

    remote.release('"placed once"');
    const answered = await first;
    expect(answered.isError).toBeFalsy();
    expect(textOf(answered)).toContain('placed once');
    const third = await call(c, 'slow.place', args('/wait', 'p'), 'key-held');
    expect(third._meta?.[REPLAYED_META]).toBe(true);
    expect(third.content).toEqual(answered.content);
    expect(seenWith('/wait', 'key-held')).toHaveLength(1);
  });

  it('retries a write a kill -9 cut by its reconcile tool: done records its result, not done writes again', async () => {
    const before = remote.seen.length;
    const settle = call(c, 'shop.settle', args('/hold', 's'), 'key-settle').catch(() => undefined);
    const redo = call(c, 'shop.redo', args('/hold', 'r'), 'key-redo').catch(() => undefined);
    await remote.received(before + 2);
    await d.stop('SIGKILL');
    await Promise.all([settle, redo]);
    await c.close().catch(() => {});
    remote.route('/hold', (_req, res) => res.end(`written-${remote.seen.length}`));

    d = await startDaemon({ stateDir, args: daemonArgs() });
    c = await connect(d.url);

    // done: the reconcile tool's result is the write's answer, and the write is not sent again.
    const settled = await call(c, 'shop.settle', args('/hold', 's'), 'key-settle');
    expect(settled.isError).toBeFalsy();
    expect(settled._meta?.[REPLAYED_META]).toBeUndefined();
    expect(seenWith('/hold', 'key-settle')).toHaveLength(1);
    const lookups = seenWith('/lookup', 'key-settle');
    expect(lookups).toHaveLength(1);
    const asked = remote.seen.indexOf(lookups[0]!) + 1;
    expect(textOf(settled)).toContain(`lookup-${asked}`);
    // ...and recorded: the same call again is that answer replayed, nothing asked or written.
    const again = await call(c, 'shop.settle', args('/hold', 's'), 'key-settle');
    expect(again._meta?.[REPLAYED_META]).toBe(true);
    expect(again.content).toEqual(settled.content);
    expect(seenWith('/lookup', 'key-settle')).toHaveLength(1);

    // not done: the write runs again, with the same key, after the reconcile tool asked.
    const redone = await call(c, 'shop.redo', args('/hold', 'r'), 'key-redo');
    expect(redone.isError).toBeFalsy();
    const writes = seenWith('/hold', 'key-redo');
    expect(writes).toHaveLength(2);
    expect(seenWith('/lookup', 'key-redo')).toHaveLength(1);
    expect(remote.seen.indexOf(seenWith('/lookup', 'key-redo')[0]!)).toBeLessThan(remote.seen.indexOf(writes[1]!));
    expect(textOf(redone)).toContain(`written-${remote.seen.indexOf(writes[1]!) + 1}`);
  });

  it('refuses to deploy a reconcile tool whose returns cannot say {"done": boolean}, and takes one that can', async () => {
    const refused = await fetch(`${d.url}/harnesses/strict`, { method: 'PUT', body: await shopImage(upstream(), { type: 'string' }) });
    expect(refused.status).toBe(422);
    const body = (await refused.json()) as { error: { code: string; message: string; tool: string; write: string } };
    expect(body.error.code).toBe('effect-reconcile-returns');
    expect(body.error).toMatchObject({ tool: 'found', write: 'settle' });
    expect(body.error.message).toContain('not an object');
    expect(body.error.message).toContain('"done"');

    const notBoolean = await fetch(`${d.url}/harnesses/strict`, {
      method: 'PUT',
      body: await shopImage(upstream(), { type: 'object', properties: { done: { const: true } } }),
    });
    expect(notBoolean.status).toBe(422);
    expect(((await notBoolean.json()) as { error: { message: string } }).error.message).toContain('"done" cannot be false');

    const fits = await fetch(`${d.url}/harnesses/strict`, {
      method: 'PUT',
      body: await shopImage(upstream(), { type: 'object', properties: { done: { type: 'boolean' }, result: {} }, required: ['done'] }),
    });
    expect(fits.status).toBe(201);
  });
});
