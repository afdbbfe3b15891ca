// A bermd replica and its database going away: a PostgreSQL server of the test's own, stopped and started
// under the replica, and a path to the database that goes silent (a relay holding every byte, closing
// nothing). While the database is gone, the replica keeps serving what it holds and refuses deploys,
// undeploys and image downloads with 503 store-unavailable, within a bound it sets; when it comes back,
// the replica catches up with what it missed. At start, a database that does not answer is waited for,
// up to --store-wait, saying so; then bermd gives up, saying why, and never the connection's password;
// one that refuses (a wrong password, no such database) stops the start at once.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { parseOptions } from 'bermd';
import { runCli, Scratch } from '../../cli/test/helpers/cli.js';
import { closedPort } from '../../../test/helpers/loopback.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { type PostgresServer, startPostgres } from '../../../test/helpers/postgres-server.js';
import { exited, launchDaemon, removeDir, type RunningDaemon, startDaemon, tempDir } from './daemon.js';
import { connect, deploy, type McpConnection, put, valueOf } from './mcp-client.js';
import { createDatabase, databaseUrl, describePostgres, dropDatabase, sql } from './postgres.js';
import { type Relay, startRelay } from './relay.js';
import { listed, NO_RECONCILIATION, until, within } from './replicas.js';

const servers: PostgresServer[] = [];
const daemons: Array<Pick<RunningDaemon, 'stop'>> = [];
const sessions: McpConnection[] = [];
const relays: Relay[] = [];
const databases: string[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const c of sessions.splice(0)) await c.close().catch(() => {});
  await Promise.all(daemons.splice(0).map((d) => d.stop()));
  for (const r of relays.splice(0)) await r.close();
  for (const db of databases.splice(0)) await dropDatabase(db);
  for (const s of servers.splice(0)) await s.remove();
  for (const d of dirs.splice(0)) await removeDir(d);
});

async function server(): Promise<PostgresServer> {
  const s = await startPostgres();
  servers.push(s);
  return s;
}

const logged = (msg: string) => (e: Record<string, unknown>) => e.msg === msg;

/** What a replica logs when its listening connection is lost, and when it is back. */
const LOST =
  "lost the store's notifications: changes made through other replicas are not followed until they are back; " +
  'deploys here do not depend on them (they read the store itself); reconnecting';
const BACK = 'the store answers again: comparing the deployed set with it';

/** Resolves with the first entry of `d`'s log named `msg`, or fails once the tests' wait limit has passed. */
const logs = (d: Pick<RunningDaemon, 'waitForLog'>, msg: string) => within(`the log line "${msg}"`, d.waitForLog(logged(msg)));

describePostgres('a replica whose database goes away', { timeout: 120_000 }, () => {
  it('keeps serving, refuses deploys and undeploys with 503 store-unavailable, and catches up when the database returns', async () => {
    const pg = await server();
    // No periodic reconciliation: what is caught up here is caught up by the reconnection.
    const r = await startDaemon({ store: pg.url, args: NO_RECONCILIATION });
    daemons.push(r);
    await deploy(r.url, 'h', await harnessImage());
    await deploy(r.url, 'gone', await harnessImage(manifestWithTools(['other'])));
    const c = await connect(r.url);
    sessions.push(c);
    // A change this replica is not told of (no notification), as one made while it was cut off would be.
    await sql(pg.url, "DELETE FROM berm_harness WHERE name = 'gone'");

    await pg.stop('fast');
    await logs(r, LOST);
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
    await logs(r, 'could not write usage; kept, and tried again');

    const changed = c.toolsChanged.next();
    await pg.start();
    await logs(r, BACK);
    await within('list_changed after the reconnection', changed);
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

describePostgres('a replica whose path to the database goes silent', { timeout: 120_000 }, () => {
  it('notices within the bound bermd sets, answers deploys and image downloads 503 meanwhile, and recovers when the path forwards again', async () => {
    const db = await createDatabase();
    databases.push(db);
    const relay = await startRelay(db);
    relays.push(relay);
    // A through the relay, with a 1 s --store-timeout: a silence is noticed within 2 s (docs/deploy.md).
    // B reaches the database directly. Neither reconciles periodically.
    const a = await startDaemon({ store: relay.through(db), args: [...NO_RECONCILIATION, '--store-timeout', '1s'] });
    daemons.push(a);
    const b = await startDaemon({ store: db, args: NO_RECONCILIATION });
    daemons.push(b);
    const held = await harnessImage();
    await deploy(a.url, 'h', held);

    relay.silence();
    // No byte comes back and no socket closes: the probe of the listening connection goes unanswered.
    await logs(a, LOST);
    const refused = await within('the deploy through the silent path answered', put(`${a.url}/harnesses/next`, await harnessImage()));
    expect(refused.status).toBe(503);
    const body = (await refused.json()) as { error: { code: string; message: string; store: string } };
    expect(body.error.code).toBe('store-unavailable');
    expect(body.error.store).toBe(`postgres://berm@127.0.0.1:${relay.port}${new URL(db).pathname}`);
    const image = await within('the image download through the silent path answered', fetch(`${a.url}/harnesses/h/image`));
    expect(image.status).toBe(503);
    expect(((await image.json()) as { error: { code: string } }).error.code).toBe('store-unavailable');
    // What it holds, it serves.
    expect(await listed(a)).toEqual(['h']);
    // A deploy through B while A hears nothing: A follows it once the path forwards again.
    await deploy(b.url, 'k', await harnessImage(manifestWithTools(['other'])));

    relay.resume();
    await logs(a, BACK);
    await until('k, deployed through B while the path was silent, on A', async () => ((await listed(a)).includes('k') ? true : undefined));
    expect((await put(`${a.url}/harnesses/next`, await harnessImage())).status).toBe(201);
    const download = await fetch(`${a.url}/harnesses/h/image`);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(held))).toBe(true);
  });
});

describePostgres('start-up with the database down', { timeout: 120_000 }, () => {
  it('waits for it, saying so, and starts once it answers', async () => {
    const pg = await server();
    await pg.stop('fast');
    const launched = await launchDaemon({ store: pg.url, args: ['--store-wait', '60s'] });
    daemons.push(launched);
    const waiting = await logs(launched, 'the store does not answer; waiting for it (up to --store-wait)');
    expect(waiting).toMatchObject({ store: `postgres://berm@127.0.0.1:${pg.port}/postgres`, wait_seconds: 60 });
    await pg.start();
    const d = await within('the listening line', launched.listening);
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
    expect(await within('the exit', exited(launched.process))).toBe(1);
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

describePostgres('start-up refused by the database', { timeout: 120_000 }, () => {
  /** Starts bermd (or `migrate-store`) on `url` with a long --store-wait; resolves once it has exited. */
  async function refusedStart(command: string[]): Promise<{ code: number | string; stderr: string; stdout: string; waited: boolean }> {
    const launched = await launchDaemon({ command });
    daemons.push(launched);
    const code = await within('the exit', exited(launched.process));
    return {
      code,
      stderr: launched.stderr(),
      stdout: launched.stdout(),
      waited: launched.log().some(logged('the store does not answer; waiting for it (up to --store-wait)')),
    };
  }
  const start = (url: string) => ['--listen', '127.0.0.1:0', '--store', url, '--store-wait', '10m'];

  it('a wrong password stops the start at once, exit 1, naming the store without the password', async () => {
    const pg = await server();
    await sql(pg.url, "CREATE ROLE berm_pw LOGIN PASSWORD 'the-right-one'");
    // berm_pw must give a password over TCP (the server's other roles are trusted): the rule goes first.
    await pg.stop('fast');
    const hba = path.join(pg.dir, 'data', 'pg_hba.conf');
    const rules = await readFile(hba, 'utf8');
    await writeFile(hba, `host all berm_pw 127.0.0.1/32 scram-sha-256\n${rules}`);
    await pg.start();

    const outcome = await refusedStart(start(`postgres://berm_pw:wrong-hunter2@127.0.0.1:${pg.port}/postgres`));
    expect(outcome.code).toBe(1);
    expect(outcome.waited).toBe(false);
    expect(outcome.stderr).toContain(
      `bermd: cannot open the store postgres://berm_pw@127.0.0.1:${pg.port}/postgres: 28P01: password authentication failed for user "berm_pw"\n`,
    );
    expect(outcome.stderr + outcome.stdout).not.toContain('hunter2');
    expect(outcome.stdout).toBe('');
  });

  it('a missing database stops the start at once, exit 1, saying which', async () => {
    const url = databaseUrl('berm_no_such_database');
    const outcome = await refusedStart(start(url));
    expect(outcome.code).toBe(1);
    expect(outcome.waited).toBe(false);
    expect(outcome.stderr).toContain(`bermd: cannot open the store ${url}: 3D000: database "berm_no_such_database" does not exist\n`);
    expect(outcome.stdout).toBe('');
  });

  it("the database's words are escaped on stderr: a database name holding an escape sequence reaches no terminal raw", async () => {
    // ESC [ (CSI), BEL and U+009B (CSI in one character); node-postgres decodes the URL's path with decodeURI.
    const name = 'berm_\u001b[31mred\u0007\u009b2J';
    const url = databaseUrl(encodeURIComponent(name));
    const said = 'database "berm_\\u001b[31mred\\u0007\\u009b2J" does not exist';
    const daemon = await refusedStart(start(url));
    expect(daemon.code).toBe(1);
    expect(daemon.stderr).toContain(`bermd: cannot open the store ${url}: 3D000: ${said}\n`);
    const from = await tempDir();
    dirs.push(from);
    await mkdir(path.join(from, 'harnesses'));
    const migrate = await refusedStart(['migrate-store', '--from', from, '--to', url]);
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toContain(`bermd migrate-store: cannot open the store ${url}: 3D000: ${said}\n`);
    for (const written of [daemon.stderr, migrate.stderr]) expect(written).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});

describe('--store-timeout', () => {
  const store = ['--store', 'postgres://berm@127.0.0.1:5432/berm'];

  it('is 10s unless given, reads a duration, and applies to a --store database only', async () => {
    expect(await parseOptions(store)).toMatchObject({ storeTimeoutMs: 10_000 });
    expect(await parseOptions([...store, '--store-timeout', '1500ms'])).toMatchObject({ storeTimeoutMs: 1500 });
    await expect(parseOptions(['--store-timeout', '5s'])).rejects.toMatchObject({
      code: 'bad-option',
      message: '--store-timeout applies to a --store database only',
    });
  });

  it('refuses 0 (a wait without end is what it is there to prevent) and more than an hour', async () => {
    await expect(parseOptions([...store, '--store-timeout', '0'])).rejects.toMatchObject({
      code: 'bad-option',
      message: '--store-timeout 0: must be at least 1ms',
    });
    await expect(parseOptions([...store, '--store-timeout', '2h'])).rejects.toMatchObject({
      code: 'bad-option',
      message: '--store-timeout 2h: must be at most 1h',
    });
  });
});
