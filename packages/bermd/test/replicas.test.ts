// bermd replicas sharing one PostgreSQL database: real processes, real HTTP, the MCP SDK's client. A
// deploy through one is served by the others, an undeploy reaches them all, a use on one protects a
// tool from a breaking redeploy through another (even one that has not heard of it), deploys of one name
// through two replicas serialise, a replica killed in the middle of a deploy leaves the old harness or the
// new one everywhere, and one whose listening connection is ended catches up when it is back. The replicas
// run without periodic reconciliation, so what reaches them is what the test is about: a notification, or
// the comparison that follows a reconnection.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { HarnessChange } from '@berm/protocol';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { digestOf, LISTEN_APPLICATION_NAME, LOCK_CLASS, SCHEMA_VERSION } from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { readSse } from '../../ui/web/src/sse.js';
import { exited, startDaemon, type RunningDaemon } from './daemon.js';
import { connect, connectModern, deploy, type McpConnection, put, undeploy, valueOf } from './mcp-client.js';
import { createDatabase, describePostgres, dropDatabase, sql } from './postgres.js';
import { type Relay, startRelay } from './relay.js';
import { detail, listed, NO_RECONCILIATION, startReplicas, stopAll, until, within } from './replicas.js';

/** What a replica logs when its listening connection is lost, and when it is back. */
const LOST =
  "lost the store's notifications: changes made through other replicas are not followed until they are back; " +
  'deploys here do not depend on them (they read the store itself); reconnecting';
const BACK = 'the store answers again: comparing the deployed set with it';

describePostgres('bermd replicas on one PostgreSQL database', { timeout: 120_000 }, () => {
  let db: string;
  const daemons: RunningDaemon[] = [];
  const sessions: Array<{ close(): Promise<void> }> = [];
  const relays: Relay[] = [];

  beforeEach(async () => {
    db = await createDatabase();
  });
  afterEach(async () => {
    for (const c of sessions.splice(0)) await c.close().catch(() => {});
    await stopAll(daemons.splice(0));
    for (const r of relays.splice(0)) await r.close();
    await dropDatabase(db);
  });

  async function replicas(n: number, args: string[] = NO_RECONCILIATION): Promise<RunningDaemon[]> {
    const started = await startReplicas(n, db, { args });
    daemons.push(...started);
    return started;
  }

  /** A replica whose connections to the database pass through a relay the test controls. */
  async function relayed(): Promise<{ replica: RunningDaemon; relay: Relay }> {
    const relay = await startRelay(db);
    relays.push(relay);
    const replica = await startDaemon({ store: relay.through(db), args: NO_RECONCILIATION });
    daemons.push(replica);
    return { replica, relay };
  }

  /**
   * Ends, from the server's side, the listening connection `relay` carries, and keeps the replica from
   * listening again (until `relay.admit`); its other connections pass. Resolves once the replica has said
   * it lost its notifications.
   */
  async function cutListening(replica: RunningDaemon, relay: Relay): Promise<void> {
    const [listening] = await until('the replica listening', async () => {
      const rows = await sql<{ pid: number }>(
        db,
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND client_port = ANY($2::int[])',
        [LISTEN_APPLICATION_NAME, relay.upstreamPorts(LISTEN_APPLICATION_NAME)],
      );
      return rows.length === 1 ? rows : undefined;
    });
    relay.refuse(LISTEN_APPLICATION_NAME);
    expect(await sql(db, 'SELECT pg_terminate_backend($1) AS ended', [listening!.pid])).toEqual([{ ended: true }]);
    await within(
      'the replica saying it lost its notifications',
      replica.waitForLog((e) => e.msg === LOST),
    );
  }

  async function session(d: RunningDaemon): Promise<McpConnection> {
    const c = await connect(d.url);
    sessions.push(c);
    return c;
  }

  const toolNames = async (c: McpConnection): Promise<string[]> => (await c.client.listTools()).tools.map((t) => t.name).sort();

  it('three replicas starting at once: a deploy through one is listed and called on the others, each client told by list_changed', async () => {
    const [a, b, c] = await replicas(3);
    // A 2025 session on B, a 2026-07-28 client listening on C.
    const onB = await session(b!);
    const onC = await connectModern(c!.url);
    sessions.push(onC);
    await onC.listen();
    const changedB = onB.toolsChanged.next();
    const changedC = onC.toolsChanged.next();
    await deploy(a!.url, 'h', await harnessImage(manifestWithTools(['echo'])));
    await within('list_changed on B and C', Promise.all([changedB, changedC]));
    expect(await toolNames(onB)).toEqual(['h.echo']);
    expect(valueOf((await onB.client.callTool({ name: 'h.echo', arguments: { query: 'on B' } })) as CallToolResult)).toEqual({
      query: 'on B',
    });
    expect((await onC.client.listTools()).tools.map((t) => t.name)).toEqual(['h.echo']);
    expect(valueOf(await onC.client.callTool({ name: 'h.echo', arguments: { query: 'on C' } }))).toEqual({ query: 'on C' });
    expect(await listed(b!)).toEqual(['h']);
    // The schema was migrated once, by whichever replica got there first.
    expect(await sql(db, 'SELECT version FROM berm_schema')).toEqual([{ version: SCHEMA_VERSION }]);
  });

  it('an undeploy through one replica reaches the others: list_changed, and the harness gone from their lists', async () => {
    const [a, b, c] = await replicas(3);
    await deploy(a!.url, 'h', await harnessImage());
    await deploy(a!.url, 'k', await harnessImage(manifestWithTools(['other'])));
    await until('h and k on C', async () => ((await listed(c!)).length === 2 ? true : undefined));
    const onA = await session(a!);
    const changed = onA.toolsChanged.next();
    await undeploy(b!.url, 'h');
    await within('list_changed on A', changed);
    expect(await toolNames(onA)).toEqual(['k.other']);
    expect(await listed(a!)).toEqual(['k']);
    await until('h gone from C', async () => ((await listed(c!)).includes('h') ? undefined : true));
    expect((await fetch(`${c!.url}/harnesses/h`)).status).toBe(404);
  });

  it('GET /events on a replica streams the deploys and undeploys made through the others', async () => {
    const [a, b, c] = await replicas(3);
    const res = await fetch(`${c!.url}/events`);
    expect(res.status).toBe(200);
    const messages = readSse(res.body!);
    try {
      await deploy(a!.url, 'h', await harnessImage());
      await undeploy(b!.url, 'h');
      const next = async (): Promise<{ event: string; data: HarnessChange }> => {
        const { value, done } = await within('the next event on C', messages.next());
        if (done) throw new Error('the stream ended');
        return { event: value.event, data: JSON.parse(value.data) as HarnessChange };
      };
      expect(await next()).toEqual({ event: 'deployed', data: { type: 'deployed', name: 'h', replaced: false } });
      expect(await next()).toEqual({ event: 'undeployed', data: { type: 'undeployed', name: 'h' } });
    } finally {
      await messages.return(undefined);
    }
  });

  it("a use on replica B is listed by A, told by the usage write's notification", async () => {
    const [a, b] = await replicas(2);
    await deploy(a!.url, 'h', await harnessImage(manifestWithTools(['keep', 'used'])));
    const onB = await session(b!);
    await until('h on B', async () => ((await toolNames(onB)).includes('h.used') ? true : undefined));
    const before = new Date().toISOString();
    expect(valueOf((await onB.client.callTool({ name: 'h.used', arguments: { query: 'q' } })) as CallToolResult)).toEqual({ query: 'q' });
    // B writes its uses within 5 s; A learns of them from the write's notification (no reconciliation runs).
    const seen = await until('the use made on B, listed by A', async () => {
      const h = await detail(a!, 'h');
      const usedAt = (h?.usage as { tools: Record<string, string | null> } | undefined)?.tools.used;
      return usedAt === null || usedAt === undefined ? undefined : h;
    });
    expect(seen.last_used_at! >= before).toBe(true);
    expect((seen.usage as { tools: Record<string, string | null> }).tools).toEqual({ keep: null, used: seen.last_used_at });
  });

  it('the gate reads usage inside its transaction: a use on B that A has not heard of still makes a breaking redeploy through A answer 409', async () => {
    const { replica: a, relay } = await relayed();
    const [b] = await replicas(1);
    const v1 = await harnessImage(manifestWithTools(['keep', 'used']));
    await deploy(a.url, 'h', v1);
    const onB = await session(b!);
    await until('h on B', async () => ((await toolNames(onB)).includes('h.used') ? true : undefined));
    // A hears nothing from here on: its listening connection is ended and kept from coming back.
    await cutListening(a, relay);
    expect(valueOf((await onB.client.callTool({ name: 'h.used', arguments: { query: 'q' } })) as CallToolResult)).toEqual({ query: 'q' });
    await until('the use made on B, written to the database', async () => {
      const rows = await sql(db, "SELECT 1 FROM berm_usage WHERE harness = 'h' AND kind = 'tool' AND item = 'used'");
      return rows.length === 1 ? true : undefined;
    });
    expect((await detail(a, 'h'))?.usage).toMatchObject({ tools: { keep: null, used: null } });

    const v2 = await harnessImage(manifestWithTools(['keep'], { version: '0.2.0' }));
    const refused = await put(`${a.url}/harnesses/h`, v2);
    expect(refused.status).toBe(409);
    const body = (await refused.json()) as { error: { code: string; breaks: { code: string; tool: string }[] } };
    expect(body.error.code).toBe('breaks-callers');
    expect(body.error.breaks.map((x) => [x.code, x.tool])).toEqual([['tool-removed', 'used']]);
    expect((await detail(b!, 'h'))?.digest).toBe(digestOf(v1));
    expect((await detail(a, 'h'))?.digest).toBe(digestOf(v1));
  });

  it('a replica whose listening connection is ended says so, deploys meanwhile, reconnects, and follows what another replica deployed meanwhile', async () => {
    const { replica: a, relay } = await relayed();
    const [b] = await replicas(1);
    await cutListening(a, relay);
    await deploy(b!.url, 'h', await harnessImage());
    // Deploys through A go on: they read the store inside their transaction, not what A has heard.
    expect((await put(`${a.url}/harnesses/mine`, await harnessImage(manifestWithTools(['other'])))).status).toBe(201);
    await until('mine, deployed through A, on B', async () => ((await listed(b!)).includes('mine') ? true : undefined));
    // A has not heard of h, and nothing but its listening connection could tell it.
    expect(await listed(a)).toEqual(['mine']);

    const onA = await session(a);
    const changed = onA.toolsChanged.next();
    relay.admit(LISTEN_APPLICATION_NAME);
    await within(
      'the replica listening again',
      a.waitForLog((e) => e.msg === BACK),
    );
    await within('list_changed on A once it has compared its set with the store', changed);
    expect(await listed(a)).toEqual(['h', 'mine']);
    expect(a.log().some((e) => e.msg === 'deployed harness (elsewhere)' && e.harness === 'h')).toBe(true);
  });

  it('deploys of one name through two replicas at once serialise: both answer, the second compared against the first', async () => {
    const [a, b] = await replicas(2);
    await deploy(a!.url, 'h', await harnessImage(manifestWithTools(['base'])));
    const withP = await harnessImage(manifestWithTools(['base', 'p'], { version: '0.2.0' }));
    const withQ = await harnessImage(manifestWithTools(['base', 'q'], { version: '0.3.0' }));
    // The test holds the name's lock, so both deploys are under way and waiting on it at once.
    const holder = new pg.Client({ connectionString: db });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS.name, 'h']);
      const first = put(`${a!.url}/harnesses/h`, withP);
      const second = put(`${b!.url}/harnesses/h`, withQ);
      await until('both deploys waiting on the lock', async () => {
        const [row] = await sql<{ n: number }>(
          db,
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        );
        return row!.n === 2 ? true : undefined;
      });
      await holder.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS.name, 'h']);
      const answers = await Promise.all([first, second]);
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      const results = (await Promise.all(answers.map((r) => r.json()))) as {
        version: string;
        reported: { code: string; tool: string }[];
      }[];
      // Whichever went first added a tool to base and broke nothing; the second dropped the first's new tool.
      const [earlier, later] = results[0]!.reported.length === 0 ? [results[0]!, results[1]!] : [results[1]!, results[0]!];
      expect(earlier.reported).toEqual([]);
      const firstTool = earlier.version === '0.2.0' ? 'p' : 'q';
      expect(later.reported.map((x) => [x.code, x.tool])).toEqual([['tool-removed', firstTool]]);
      // Both replicas end on the later one.
      for (const d of [a!, b!])
        await until(`${later.version} on ${d.url}`, async () => ((await detail(d, 'h'))?.version === later.version ? true : undefined));
    } finally {
      await holder.end();
    }
  });

  it('a replica killed in the middle of a deploy: before its commit the old harness stays everywhere, after it the new one reaches the others', async () => {
    const [b] = await replicas(1);
    const v1 = await harnessImage(manifestWithTools(['one']));
    const v2 = await harnessImage(manifestWithTools(['two'], { version: '0.2.0' }));
    const v3 = await harnessImage(manifestWithTools(['three'], { version: '0.3.0' }));
    await deploy(b!.url, 'h', v1);

    // Killed with its transaction written, not committed: nothing changed, and the name's lock went with it.
    const written = await startDaemon({ store: db, args: NO_RECONCILIATION, env: { BERMD_FAULT_AT: 'pg-deploy-written' } });
    const dying = exited(written.process);
    put(`${written.url}/harnesses/h`, v2).catch(() => {});
    expect(await within('the replica killing itself once its deploy is written', dying)).toBe('SIGKILL');
    expect((await detail(b!, 'h'))?.digest).toBe(digestOf(v1));
    const restarted = await startDaemon({ store: db, args: NO_RECONCILIATION });
    daemons.push(restarted);
    expect((await detail(restarted, 'h'))?.digest).toBe(digestOf(v1));

    // Killed once committed, before answering: the other replicas are told, and serve it.
    const onB = await session(b!);
    const changed = onB.toolsChanged.next();
    const committed = await startDaemon({ store: db, args: NO_RECONCILIATION, env: { BERMD_FAULT_AT: 'pg-deploy-committed' } });
    const gone = exited(committed.process);
    put(`${committed.url}/harnesses/h`, v3).catch(() => {});
    expect(await within('the replica killing itself once its deploy is committed', gone)).toBe('SIGKILL');
    await within('list_changed on B', changed);
    expect(await toolNames(onB)).toEqual(['h.three']);
    expect(valueOf((await onB.client.callTool({ name: 'h.three', arguments: { query: 'after' } })) as CallToolResult)).toEqual({
      query: 'after',
    });
    await until('v3 on the restarted replica', async () => ((await detail(restarted, 'h'))?.version === '0.3.0' ? true : undefined));
  });

  it('the periodic reconciliation catches a change whose notification never came', async () => {
    const [a] = await replicas(1, ['--reconcile-interval', '200ms']);
    await deploy(a!.url, 'h', await harnessImage());
    await deploy(a!.url, 'k', await harnessImage(manifestWithTools(['other'])));
    const onA = await session(a!);
    const changed = onA.toolsChanged.next();
    // Removed behind bermd's back: no notification is sent.
    await sql(db, "DELETE FROM berm_harness WHERE name = 'k'");
    await within('list_changed on A after a reconciliation', changed);
    expect(await listed(a!)).toEqual(['h']);
    expect(a!.log().some((e) => e.msg === 'undeployed harness (elsewhere)' && e.harness === 'k')).toBe(true);
  });
});
