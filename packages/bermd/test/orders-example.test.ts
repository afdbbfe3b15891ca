// examples/orders, built as a user builds it (crab build) and deployed on a real bermd, against a stand-in
// order service that keeps one order per Idempotency-Key and counts every write it receives: place sent
// twice with one key writes once and answers alike; notify (retry none) cut by a kill -9 is not sent again
// but answered outcome-unknown.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { IDEMPOTENCY_KEY_META, REPLAYED_META } from '../dist/mcp/index.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, deploy, type McpConnection } from './mcp-client.js';
import { RemoteHost } from './remote.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SECRET = 'orders-token';
/** A loopback address of this run's own, so the service can listen on port 80 as orders.example.com does. */
const ADDRESS = `127.${30 + (process.pid % 200)}.${(process.pid >> 8) % 250}.${1 + (Date.now() % 250)}`;

type Answer = CallToolResult & { _meta?: Record<string, unknown> };

function codeOf(result: Answer): string | undefined {
  return (result._meta?.['berm/error'] as { code?: string } | undefined)?.code;
}

/** Builds examples/orders with the command line, as its README says: the image's path. */
function buildOrders(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin', 'crab'), 'build', 'examples/orders', '--json'],
      { cwd: ROOT },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`crab build examples/orders failed: ${stderr}`));
        else resolve(path.join(ROOT, (JSON.parse(stdout) as { image: string }).image));
      },
    );
  });
}

describe('examples/orders', () => {
  let service: RemoteHost;
  let d: RunningDaemon;
  let c: McpConnection;
  let stateDir: string;
  let secretsDir: string;
  /** The orders the service placed, by Idempotency-Key. */
  const orders = new Map<string, { id: string; item: string; quantity: number }>();
  const writes = (pathname: string, key?: string) =>
    service.seen.filter((s) => s.method === 'POST' && s.url === pathname && (key === undefined || s.headers['idempotency-key'] === key));
  const daemonArgs = () => [
    '--serve',
    'berm.http.fetch',
    '--secrets',
    path.join(secretsDir, 'secrets.json'),
    '--resolve',
    `orders.example.com:80:${ADDRESS}`,
  ];
  const call = (name: string, args: Record<string, unknown>, key: string): Promise<Answer> =>
    c.client.callTool({ name, arguments: args, _meta: { [IDEMPOTENCY_KEY_META]: key } }) as Promise<Answer>;

  beforeAll(async () => {
    const image = await buildOrders();
    service = await RemoteHost.start({ address: ADDRESS, port: 80 });
    service.route('/v1/orders', (req, res, seen) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET') {
        const found = orders.get(new URL(seen.url, 'http://x').searchParams.get('key') ?? '');
        res.statusCode = found === undefined ? 404 : 200;
        res.end(JSON.stringify(found ?? { error: 'no such order' }));
        return;
      }
      const key = String(seen.headers['idempotency-key']);
      let order = orders.get(key);
      if (order === undefined) {
        const { item, quantity } = JSON.parse(seen.body) as { item: string; quantity: number };
        order = { id: `order-${orders.size + 1}`, item, quantity };
        orders.set(key, order);
        res.statusCode = 201;
      }
      res.end(JSON.stringify(order));
    });
    service.hold('/v1/notifications');
    secretsDir = await tempDir('bermd-orders-secrets-');
    await writeFile(path.join(secretsDir, 'secrets.json'), JSON.stringify({ orders: SECRET }), { mode: 0o600 });
    stateDir = await tempDir('bermd-orders-');
    d = await startDaemon({ stateDir, args: daemonArgs() });
    await deploy(d.url, 'orders', new Uint8Array(await readFile(image)));
    c = await connect(d.url);
  }, 180_000);
  afterAll(async () => {
    await c?.close();
    await d?.stop();
    await service?.close();
    if (stateDir) await removeDir(stateDir);
    if (secretsDir) await removeDir(secretsDir);
  });

  it('places an order once for a key sent twice, both answers the same order', async () => {
    const first = await call('orders.place', { item: 'lamp', quantity: 2 }, 'order-lamp');
    const second = await call('orders.place', { item: 'lamp', quantity: 2 }, 'order-lamp');
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toEqual({ id: orders.get('order-lamp')!.id, item: 'lamp', quantity: 2 });
    expect(second._meta?.[REPLAYED_META]).toBe(true);
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(second.content).toEqual(first.content);
    const sent = writes('/v1/orders', 'order-lamp');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it('answers outcome-unknown to notify retried after a kill -9 cut it, sending nothing again', async () => {
    const before = service.seen.length;
    const cut = call('orders.notify', { to: 'ada', message: 'shipped' }, 'notify-ada').catch(() => undefined);
    await service.received(before + 1);
    await d.stop('SIGKILL');
    await cut;
    await c.close().catch(() => {});
    d = await startDaemon({ stateDir, args: daemonArgs() });
    c = await connect(d.url);

    const retried = await call('orders.notify', { to: 'ada', message: 'shipped' }, 'notify-ada');
    expect(retried.isError).toBe(true);
    expect(codeOf(retried)).toBe('outcome-unknown');
    expect(JSON.stringify(retried.content)).toContain('orders.notify');
    expect(writes('/v1/notifications')).toHaveLength(1);
  });
});
