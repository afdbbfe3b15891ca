// The receipts of external writes seen from outside, against a real bermd with static principals and a
// stand-in upstream that records every write: `GET /harnesses/{name}/receipts` (berm:read, filtered by key,
// answers only when asked), `berm receipts` (its table, escaped; its JSON), and `berm call
// --idempotency-key`, whose second call with the key is the first answer replayed, written once upstream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccessFile, as, bearer, errorOf, writeAccess } from '../../bermd/test/access.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { connect } from '../../bermd/test/mcp-client.js';
import { shopImage } from '../../bermd/test/receipts-guest.js';
import { RemoteHost, resolvedTo } from '../../bermd/test/remote.js';
import { runCli } from './helpers/cli.js';

const UPSTREAM = 'orders.example.com';

interface Receipt {
  principal: string;
  tool: string;
  key: string;
  generated: boolean;
  state: string;
  outcome: string | null;
  replica: string;
  answer_kept: boolean;
  answer?: { content: { text: string }[] };
}

let remote: RemoteHost;
let d: RunningDaemon;
let dir: string;
let access: AccessFile;
const token = (name: string): string => access.tokens[name]!;

/** A write's arguments: the berm.http.fetch request the shop's tools relay. */
const order = (name: string) => ({
  method: 'POST',
  url: `http://${UPSTREAM}:${remote.port}/orders`,
  headers: { 'idempotency-key': '{idempotency-key}' },
  body: JSON.stringify({ order: name }),
});
const writesWith = (key: string) => remote.seen.filter((s) => s.headers['idempotency-key'] === key);

/** Calls shop.place as `caller` with `key`, through the official SDK client. */
async function place(name: string, key: string): Promise<{ content: unknown }> {
  const c = await connect(d.url, bearer(token('caller')));
  try {
    return (await c.client.callTool({ name: 'shop.place', arguments: order(name), _meta: { 'io.berm/idempotency-key': key } })) as {
      content: unknown;
    };
  } finally {
    await c.close();
  }
}

function berm(args: string[], who: string) {
  return runCli(args, { bin: 'berm', env: { BERM_URL: d.url, BERM_TOKEN: token(who) } });
}

async function receipts(query: string, who = 'reader'): Promise<Receipt[]> {
  const res = await as(token(who), `${d.url}/harnesses/shop/receipts${query}`);
  expect(res.status).toBe(200);
  const page = (await res.json()) as { name: string; receipts: Receipt[] };
  expect(page.name).toBe('shop');
  return page.receipts;
}

beforeAll(async () => {
  remote = await RemoteHost.start();
  remote.route('/orders', (_req, res) => res.end(`{"order":${remote.seen.length}}`));
  dir = await tempDir('berm-cli-receipts-');
  access = await writeAccess(dir, [
    { name: 'deployer', scopes: ['berm:deploy'] },
    { name: 'reader', scopes: ['berm:read'] },
    { name: 'caller', scopes: ['berm:call'] },
  ]);
  d = await startDaemon({
    args: ['--access', access.file, '--serve', 'berm.http.fetch', ...resolvedTo(remote, UPSTREAM), '--replica-name', 'receipts-replica'],
  });
  const res = await as(token('deployer'), `${d.url}/harnesses/shop`, {
    method: 'PUT',
    body: await shopImage(`${UPSTREAM}:${remote.port}`),
  });
  expect(res.status).toBe(201);
});

afterAll(async () => {
  await d?.stop();
  if (d) await removeDir(d.stateDir);
  await remote?.close();
  if (dir) await removeDir(dir);
});

describe('GET /harnesses/{name}/receipts', () => {
  it('needs berm:read, naming it to a principal without it', async () => {
    await place('scoped', 'route-scoped');
    const refused = await as(token('caller'), `${d.url}/harnesses/shop/receipts`);
    expect(refused.status).toBe(403);
    const error = await errorOf(refused);
    expect(error.code).toBe('insufficient-scope');
    expect(error.scope).toBe('berm:read');
  });

  it('answers the receipts without their answers unless asked, and those of one key with key', async () => {
    const first = await place('one', 'route-one');
    await place('two', 'route-two');
    const all = await receipts('');
    const one = all.find((r) => r.key === 'route-one');
    expect(one).toMatchObject({ principal: 'caller', tool: 'place', state: 'completed', outcome: 'ok', replica: 'receipts-replica' });
    expect(all.some((r) => r.key === 'route-two')).toBe(true);
    for (const r of all) expect(r).not.toHaveProperty('answer');

    const filtered = await receipts('?key=route-one');
    expect(filtered.map((r) => r.key)).toEqual(['route-one']);
    const withBodies = await receipts('?key=route-one&bodies=true');
    expect(withBodies[0]!.answer?.content).toEqual(first.content);
  });

  it('refuses a parameter it does not take, saying what it takes', async () => {
    const res = await as(token('reader'), `${d.url}/harnesses/shop/receipts?bodies=yes`);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain('bodies');
  });
});

describe('berm receipts and berm call --idempotency-key', () => {
  it('berm call with a key twice: the second is the first replayed, written once upstream', async () => {
    const args = JSON.stringify(order('cli'));
    const first = await berm(['call', 'shop.place', args, '--idempotency-key', 'cli-twice', '--json'], 'caller');
    expect(first.code).toBe(0);
    const one = JSON.parse(first.stdout) as { content: unknown; idempotency_key: string; replayed?: boolean };
    expect(one.idempotency_key).toBe('cli-twice');
    expect(one.replayed).toBeUndefined();
    const second = await berm(['call', 'shop.place', args, '--idempotency-key', 'cli-twice'], 'caller');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('idempotency key cli-twice: replayed');
    const text = (one.content as { text: string }[])[0]!.text;
    expect(second.stdout).toContain(text);
    expect(writesWith('cli-twice')).toHaveLength(1);
  });

  it('prints the receipts of a key as a table, the key escaped, and as bermd answers them with --json', async () => {
    const key = 'cli-\u001b[2J-table';
    await place('table', key);
    const table = await berm(['receipts', 'shop', '--key', key], 'reader');
    expect(table.code).toBe(0);
    expect(table.stdout).not.toContain('\u001b');
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^STARTED\s+TOOL\s+BY\s+KEY\s+OUTCOME\s+VIA$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+place\s+caller\s+cli-␛\[2J-table\s+ok\s+receipts-replica$/);

    const json = await berm(['receipts', 'shop', '--key', key, '--json'], 'reader');
    const listed = JSON.parse(json.stdout) as Receipt[];
    expect(listed).toEqual(await receipts(`?key=${encodeURIComponent(key)}`));
    expect(listed[0]).not.toHaveProperty('answer');

    const bodies = await berm(['receipts', 'shop', '--key', key, '--bodies'], 'reader');
    expect(bodies.stdout).toMatch(/\n {2}answer: \{"content":/);
    const bodiesJson = JSON.parse((await berm(['receipts', 'shop', '--key', key, '--bodies', '--json'], 'reader')).stdout) as Receipt[];
    expect(bodiesJson[0]!.answer?.content).toBeDefined();
  });

  it('says when a key has no receipt, and exits 2 for a principal without berm:read', async () => {
    const none = await berm(['receipts', 'shop', '--key', 'never-sent'], 'reader');
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('no receipt of shop for the key "never-sent"');
    const refused = await berm(['receipts', 'shop'], 'caller');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('berm:read');
  });
});
