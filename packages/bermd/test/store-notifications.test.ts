// The PostgreSQL store's channel is anyone's who can connect: a role with no right on bermd's tables may
// still NOTIFY berm_harness. A replica takes nothing from a payload but the name of what changed, and
// reads the rest from the tables; a use time the tables hold that is later than the replica's clock
// allows is no use either. Real replicas, a real database, a second role that forges.
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import type { RunningDaemon } from './daemon.js';
import { connect, deploy, type McpConnection, put, valueOf } from './mcp-client.js';
import { createDatabase, describePostgres, dropDatabase, POSTGRES_URL, sql } from './postgres.js';
import { detail, startReplicas, stopAll, until } from './replicas.js';

interface Usage {
  tools: Record<string, string | null>;
  events: Record<string, string | null>;
}

interface UseRow {
  kind: string;
  item: string;
  used_at: Date;
}

const FAR = '9999-12-31T00:00:00Z';

/** A forged usage notification, carrying `time` for the tool `echo` and as the last use, as the payload used to. */
const forgedUse = (time: unknown): string =>
  JSON.stringify({ name: 'h', what: 'usage', used: { tools: { echo: time }, events: {} }, last_used_at: time });

describePostgres('notifications on the store channel', { timeout: 120_000 }, () => {
  let db: string;
  let forger: string;
  const daemons: RunningDaemon[] = [];
  const sessions: McpConnection[] = [];

  beforeEach(async () => {
    db = await createDatabase();
    const role = `berm_forger_${randomBytes(4).toString('hex')}`;
    await sql(db, `CREATE ROLE ${role} LOGIN PASSWORD 'forger-password'`);
    const url = new URL(db);
    url.username = role;
    url.password = 'forger-password';
    forger = url.href;
  });
  afterEach(async () => {
    for (const c of sessions.splice(0)) await c.close().catch(() => {});
    await stopAll(daemons.splice(0));
    await dropDatabase(db);
    await sql(POSTGRES_URL!, `DROP ROLE IF EXISTS ${new URL(forger).username}`);
  });

  async function replicas(n: number): Promise<RunningDaemon[]> {
    const started = await startReplicas(n, db);
    daemons.push(...started);
    return started;
  }

  async function call(d: RunningDaemon, tool: string): Promise<void> {
    const c = await connect(d.url);
    sessions.push(c);
    expect(valueOf((await c.client.callTool({ name: tool, arguments: { query: 'q' } })) as CallToolResult)).toEqual({ query: 'q' });
  }

  const usageOf = async (d: RunningDaemon): Promise<{ usage: Usage; last_used_at: string | null }> =>
    (await detail(d, 'h')) as unknown as { usage: Usage; last_used_at: string | null };
  const rows = (): Promise<UseRow[]> =>
    sql<UseRow>(db, "SELECT kind, item, used_at FROM berm_usage WHERE harness = 'h' ORDER BY kind, item");
  const head = async (): Promise<{ digest: string; revision: string; deployed_at: Date; last_used_at: Date | null }> =>
    (
      await sql<{ digest: string; revision: string; deployed_at: Date; last_used_at: Date | null }>(
        db,
        "SELECT digest, revision::text AS revision, deployed_at, last_used_at FROM berm_harness WHERE name = 'h'",
      )
    )[0]!;

  it('a forged usage notification, sent by a role with no table rights, changes nothing a replica answers, writes or gates', async () => {
    const [r, w] = await replicas(2);
    await deploy(w!.url, 'h', await harnessImage(manifestWithTools(['echo', 'other'])));
    await until('h on R', async () => detail(r!, 'h'));
    const stored = await head();

    const notifier = new pg.Client({ connectionString: forger });
    await notifier.connect();
    try {
      // The premise: this role can read nothing of bermd's, and can notify its channel all the same.
      await expect(notifier.query('SELECT count(*) FROM berm_usage')).rejects.toThrow('permission denied');
      for (const payload of [
        forgedUse('zzz 1'),
        forgedUse('9'),
        forgedUse(FAR),
        forgedUse(12),
        'not json',
        'null',
        '[]',
        '"h"',
        '{"name":"h"}',
        '{"name":"h","what":"usage","used":"zzz 1"}',
        '{"name":"h","what":"usage","used":{"tools":["zzz 1"]}}',
        '{"name":"h","what":"deleted"}',
        '{"name":"../h","what":"usage"}',
        JSON.stringify({ name: 'h', what: 'usage', used: { tools: { echo: FAR } }, padding: 'x'.repeat(7000) }),
      ]) {
        await notifier.query("SELECT pg_notify('berm_harness', $1)", [payload]);
      }
    } finally {
      await notifier.end();
    }

    // Notifications reach a listener in commit order: W's usage write, made after every forged one was
    // sent, reaches R after them, and R follows a name's notifications one after the other.
    await call(w!, 'h.other');
    const seen = await until('the use W wrote, listed by R', async () => {
      const u = await usageOf(r!);
      return u.usage.tools.other === null ? undefined : u;
    });
    const [other] = await rows();
    expect(await rows()).toEqual([{ kind: 'tool', item: 'other', used_at: other!.used_at }]);
    expect(seen.usage).toEqual({ tools: { echo: null, other: other!.used_at.toISOString() }, events: {} });
    expect(seen.last_used_at).toBe((await head()).last_used_at!.toISOString());
    expect(await head()).toMatchObject({ digest: stored.digest, revision: stored.revision, deployed_at: stored.deployed_at });

    // R's own next usage write lands whole: its use, and no forged time.
    const before = new Date().toISOString();
    await call(r!, 'h.other');
    const written = await until('the use made on R, in the database', async () => {
      const now = await rows();
      return now.length === 1 && now[0]!.used_at.toISOString() >= before ? now : undefined;
    });
    expect(written).toEqual([{ kind: 'tool', item: 'other', used_at: written[0]!.used_at }]);
    expect((await head()).last_used_at).toEqual(written[0]!.used_at);
    expect((await usageOf(r!)).usage).toEqual({ tools: { echo: null, other: written[0]!.used_at.toISOString() }, events: {} });

    // No forged time counts as a use of echo: a deploy through R that removes it goes through.
    const replaced = await put(`${r!.url}/harnesses/h`, await harnessImage(manifestWithTools(['other'], { version: '0.2.0' })));
    const body = (await replaced.json()) as { reported: { code: string; tool: string; used: boolean; last_used_at: string | null }[] };
    expect(replaced.status).toBe(200);
    expect(body.reported).toEqual([expect.objectContaining({ code: 'tool-removed', tool: 'echo', used: false, last_used_at: null })]);
    expect(await rows()).toEqual(written);
  });

  it('a use time in the tables later than the clock allows is no use: not listed, not gating, and replaced by the next write', async () => {
    const [w] = await replicas(1);
    await deploy(w!.url, 'h', await harnessImage(manifestWithTools(['echo', 'other'])));
    await stopAll(daemons.splice(0));
    // What a role with table rights (or a replica whose clock runs years ahead) could have written.
    await sql(
      db,
      `INSERT INTO berm_usage (harness, kind, item, used_at) VALUES ('h', 'tool', 'echo', $1), ('h', 'tool', 'other', $1), ('h', 'event', 'alert', 'infinity')`,
      [FAR],
    );
    await sql(db, "UPDATE berm_harness SET last_used_at = $1 WHERE name = 'h'", [FAR]);

    // A replica started now reads the tables before it listens.
    const [r] = await replicas(1);
    expect(await usageOf(r!)).toMatchObject({ last_used_at: null, usage: { tools: { echo: null, other: null }, events: {} } });

    const before = new Date().toISOString();
    await call(r!, 'h.other');
    const written = await until('the use made on R, in place of the far one', async () => {
      const other = (await rows()).find((row) => row.item === 'other')!;
      return other.used_at.toISOString().startsWith('9999') ? undefined : other;
    });
    expect(written.used_at.toISOString() >= before).toBe(true);
    expect((await head()).last_used_at).toEqual(written.used_at);

    const replaced = await put(`${r!.url}/harnesses/h`, await harnessImage(manifestWithTools(['other'], { version: '0.2.0' })));
    expect(replaced.status).toBe(200);
    const body = (await replaced.json()) as { reported: { tool: string; used: boolean }[] };
    expect(body.reported).toEqual([expect.objectContaining({ tool: 'echo', used: false })]);
  });
});
