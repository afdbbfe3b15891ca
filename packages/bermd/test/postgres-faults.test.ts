// A bermd replica and its database going away: each test runs a PostgreSQL server of its own, which it
// stops and starts under the replica. While the database is gone, the replica keeps serving what it
// holds and refuses deploys and undeploys with 503 store-unavailable; when it comes back, the replica
// catches up with what it missed. At start, a database that does not answer is waited for, up to
// --store-wait, saying so; then bermd gives up, saying why, and never the connection's password.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, Scratch } from '../../cli/test/helpers/cli.js';
import { closedPort } from '../../../test/helpers/loopback.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { type PostgresServer, startPostgres } from '../../../test/helpers/postgres-server.js';
import { exited, launchDaemon, type RunningDaemon, startDaemon } from './daemon.js';
import { connect, deploy, type McpConnection, put, valueOf } from './mcp-client.js';
import { describePostgres, sql } from './postgres.js';
import { listed, until } from './replicas.js';

const servers: PostgresServer[] = [];
const daemons: Array<Pick<RunningDaemon, 'stop'>> = [];
const sessions: McpConnection[] = [];

afterEach(async () => {
  for (const c of sessions.splice(0)) await c.close().catch(() => {});
  await Promise.all(daemons.splice(0).map((d) => d.stop()));
  for (const s of servers.splice(0)) await s.remove();
});

async function server(): Promise<PostgresServer> {
  const s = await startPostgres();
  servers.push(s);
  return s;
}

const logged = (msg: string) => (e: Record<string, unknown>) => e.msg === msg;

describePostgres('a replica whose database goes away', { timeout: 120_000 }, () => {
  it('keeps serving, refuses deploys and undeploys with 503 store-unavailable, and catches up when the database returns', async () => {
    const pg = await server();
    // No periodic reconciliation: what is caught up here is caught up by the reconnection.
    const r = await startDaemon({ store: pg.url, args: ['--reconcile-interval', '0'] });
    daemons.push(r);
    await deploy(r.url, 'h', await harnessImage());
    await deploy(r.url, 'gone', await harnessImage(manifestWithTools(['other'])));
    const c = await connect(r.url);
    sessions.push(c);
    // A change this replica is not told of (no notification), as one made while it was cut off would be.
    await sql(pg.url, "DELETE FROM berm_harness WHERE name = 'gone'");

    await pg.stop('fast');
    await r.waitForLog(logged("lost the store's notifications: serving the harnesses held, refusing deploys, and reconnecting"));
    const refused = await put(`${r.url}/harnesses/next`, await harnessImage());
    expect(refused.status).toBe(503);
    const body = (await refused.json()) as { error: { code: string; message: string; store: string } };
    expect(body.error.code).toBe('store-unavailable');
    expect(body.error.store).toBe(`postgres://berm@127.0.0.1:${pg.port}/postgres`);
    expect(body.error.message).toContain(`the store postgres://berm@127.0.0.1:${pg.port}/postgres cannot be reached`);
    // The command line says so and exits 3, as for a daemon it cannot reach.
    const scratch = await Scratch.create();
    try {
      const cli = await runCli(['deploy', 'next', await scratch.write('next.wasm', await harnessImage()), '--url', r.url]);
      expect(cli.code).toBe(3);
      expect(cli.stderr).toContain(`the store postgres://berm@127.0.0.1:${pg.port}/postgres cannot be reached`);
    } finally {
      await scratch.remove();
    }
    const refusedUndeploy = await fetch(`${r.url}/harnesses/h`, { method: 'DELETE' });
    expect(refusedUndeploy.status).toBe(503);
    expect(((await refusedUndeploy.json()) as { error: { code: string } }).error.code).toBe('store-unavailable');
    // What it holds, it serves; the use is kept until it can be written.
    const usedAt = new Date().toISOString();
    expect(valueOf((await c.client.callTool({ name: 'h.echo', arguments: { query: 'still' } })) as CallToolResult)).toEqual({
      query: 'still',
    });
    expect(await listed(r)).toEqual(['gone', 'h']);
    await r.waitForLog(logged('could not write usage; kept, and tried again'));

    const changed = c.toolsChanged.next();
    await pg.start();
    await r.waitForLog(logged('the store answers again: comparing the deployed set with it'));
    await changed;
    expect(await listed(r)).toEqual(['h']);
    expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(['h.echo']);
    const [row] = await until('the use made while the database was away, written', async () => {
      const rows = await sql<{ used_at: Date }>(pg.url, "SELECT used_at FROM berm_usage WHERE harness = 'h' AND item = 'echo'");
      return rows.length === 1 ? rows : undefined;
    });
    expect(row!.used_at.toISOString() >= usedAt).toBe(true);
    expect((await put(`${r.url}/harnesses/next`, await harnessImage())).status).toBe(201);
  });
});

describePostgres('start-up with the database down', { timeout: 120_000 }, () => {
  it('waits for it, saying so, and starts once it answers', async () => {
    const pg = await server();
    await pg.stop('fast');
    const launched = await launchDaemon({ store: pg.url, args: ['--store-wait', '60s'] });
    daemons.push(launched);
    const waiting = await launched.waitForLog(logged('the store does not answer; waiting for it (up to --store-wait)'));
    expect(waiting).toMatchObject({ store: `postgres://berm@127.0.0.1:${pg.port}/postgres`, wait_seconds: 60 });
    await pg.start();
    const d = await launched.listening;
    expect(d.stdout()).toBe(`bermd listening on ${d.url} (store: postgres://berm@127.0.0.1:${pg.port}/postgres)\n`);
    expect((await put(`${d.url}/harnesses/h`, await harnessImage())).status).toBe(201);
  });
});

describe('start-up with no database at all', () => {
  it('gives up after --store-wait with exit 1, saying why, and never shows the password', async () => {
    const port = await closedPort();
    const launched = await launchDaemon({
      store: `postgres://berm:hunter2-not-logged@127.0.0.1:${port}/berm`,
      args: ['--store-wait', '1s'],
    });
    expect(await exited(launched.process)).toBe(1);
    const location = `postgres://berm@127.0.0.1:${port}/berm`;
    expect(launched.log().find(logged('the store does not answer; waiting for it (up to --store-wait)'))).toMatchObject({
      store: location,
    });
    expect(launched.stderr()).toContain(`bermd: the store ${location} did not answer within 1s (--store-wait): `);
    expect(launched.stderr()).toContain('ECONNREFUSED');
    expect(launched.stderr() + launched.stdout()).not.toContain('hunter2');
    expect(launched.stdout()).toBe('');
  });
});
