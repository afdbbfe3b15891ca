// What is particular to the PostgreSQL store: its schema migrations (versioned, applied at start, once
// when replicas start together, a newer schema refused), moving a directory store into it
// (`bermd migrate-store`), and its flags, whose URL (and password) is never quoted back.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PostgresStore, SCHEMA_VERSION } from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { buildImage } from '../../../test/helpers/wat.js';
import { exited, launchDaemon, startDaemon, tempDir, removeDir } from './daemon.js';
import { connect, deploy, put } from './mcp-client.js';
import { createDatabase, describePostgres, dropDatabase, POSTGRES_URL, sql } from './postgres.js';
import { detail, until } from './replicas.js';

/** A logger whose lines are kept, as objects. */
function capturing(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describePostgres('the PostgreSQL store', { timeout: 120_000 }, () => {
  let db: string;
  beforeEach(async () => {
    db = await createDatabase();
  });
  afterEach(async () => {
    await dropDatabase(db);
  });

  it('migrates a new database once when four replicas start on it together', async () => {
    const { logger, lines } = capturing();
    const stores = await Promise.all([1, 2, 3, 4].map(() => PostgresStore.open(db, { logger })));
    try {
      expect(await sql(db, 'SELECT version FROM berm_schema')).toEqual([{ version: SCHEMA_VERSION }]);
      expect(lines.filter((l) => l.msg === 'applied a schema migration to the store').map((l) => l.version)).toEqual(
        Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      );
      const tables = await sql<{ t: string }>(db, "SELECT tablename AS t FROM pg_tables WHERE tablename LIKE 'berm_%' ORDER BY 1");
      expect(tables.map((t) => t.t)).toEqual([
        'berm_harness',
        'berm_history',
        'berm_image',
        'berm_receipt',
        'berm_schema',
        'berm_session',
        'berm_usage',
      ]);
    } finally {
      for (const s of stores) await s.close();
    }
    // Opening it again applies nothing.
    const again = capturing();
    await (await PostgresStore.open(db, { logger: again.logger })).close();
    expect(again.lines.filter((l) => l.msg === 'applied a schema migration to the store')).toEqual([]);
  });

  it('refuses a database a newer bermd migrated, saying so, and exits 1', async () => {
    await (await PostgresStore.open(db, { logger: pino({ level: 'silent' }) })).close();
    await sql(db, 'UPDATE berm_schema SET version = $1', [SCHEMA_VERSION + 1]);
    await expect(PostgresStore.open(db, { logger: pino({ level: 'silent' }) })).rejects.toThrow(
      `the database's schema is at version ${SCHEMA_VERSION + 1}, newer than this bermd knows (${SCHEMA_VERSION})`,
    );
    const launched = await launchDaemon({ store: db });
    expect(await exited(launched.process)).toBe(1);
    expect(launched.stderr()).toContain(
      `bermd: cannot open the store ${db}: the database's schema is at version ${SCHEMA_VERSION + 1}, newer than this bermd knows`,
    );
  });

  it('once migrated, runs as a role that may only read and write its tables', async () => {
    await (await PostgresStore.open(db, { logger: pino({ level: 'silent' }) })).close();
    const role = `berm_app_${Date.now().toString(36)}`;
    await sql(db, `CREATE ROLE ${role} LOGIN`);
    try {
      await sql(
        db,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON berm_schema, berm_harness, berm_usage, berm_history, berm_image, berm_session, berm_receipt TO ${role}`,
      );
      await sql(db, `GRANT USAGE ON SEQUENCE berm_revision TO ${role}`);
      const asApp = new URL(db);
      asApp.username = role;
      const d = await startDaemon({ store: asApp.href });
      try {
        expect((await put(`${d.url}/harnesses/h`, await harnessImage())).status).toBe(201);
      } finally {
        await d.stop();
      }
      // It could not have created them: PostgreSQL 15 gives no one but the owner CREATE in the public schema.
      const [can] = await sql<{ create: boolean }>(db, `SELECT has_schema_privilege('${role}', 'public', 'CREATE') AS create`);
      expect(can!.create).toBe(false);
    } finally {
      await sql(db, `REASSIGN OWNED BY ${role} TO CURRENT_USER`);
      await sql(db, `DROP OWNED BY ${role}`);
      await sql(db, `DROP ROLE ${role}`);
    }
  });

  it('bermd migrate-store moves a directory store in: images, bindings, deploy times and usage; again, it moves nothing', async () => {
    const stateDir = await tempDir('bermd-move-');
    try {
      const dirDaemon = await startDaemon({ stateDir });
      await deploy(dirDaemon.url, 'a', await harnessImage(manifestWithTools(['x'])));
      expect(
        (await put(`${dirDaemon.url}/harnesses/b?timeout=3s&max_result_size=8K`, await harnessImage(manifestWithTools(['y'])))).status,
      ).toBe(201);
      const c = await connect(dirDaemon.url);
      await c.client.callTool({ name: 'b.y', arguments: { query: 'q' } });
      await c.close();
      expect(await dirDaemon.stop()).toBe(0); // writes the use
      const restarted = await startDaemon({ stateDir });
      const before = await (await fetch(`${restarted.url}/harnesses`)).json();
      const beforeB = await detail(restarted, 'b');
      await restarted.stop();
      expect((beforeB!.usage as { tools: Record<string, string | null> }).tools.y).not.toBeNull();

      const move = await launchDaemon({ command: ['migrate-store', '--from', stateDir, '--to', db] });
      expect(await exited(move.process)).toBe(0);
      const lines = move.stdout().trim().split('\n');
      expect(lines.at(-1)).toBe(`moved 2 of 2 harnesses from ${stateDir} to ${db}`);
      expect(lines.slice(0, 2).map((l) => l.replace(/ sha256:[0-9a-f]+:/, ':'))).toEqual(['a: moved', 'b: moved']);

      const onPg = await startDaemon({ store: db });
      try {
        expect(await (await fetch(`${onPg.url}/harnesses`)).json()).toEqual(before);
        expect(await detail(onPg, 'b')).toEqual(beforeB);
      } finally {
        await onPg.stop();
      }

      const again = await launchDaemon({ command: ['migrate-store', '--from', stateDir, '--to', db] });
      expect(await exited(again.process)).toBe(0);
      expect(again.stdout()).toContain('a sha256:');
      expect(again.stdout()).toContain('skipped, the database already holds this image under the name');
      expect(again.stdout().trim().split('\n').at(-1)).toBe(`moved 0 of 2 harnesses from ${stateDir} to ${db}`);
    } finally {
      await removeDir(stateDir);
    }
  });

  it('bermd migrate-store escapes what it quotes of an image: a record that is not JSON, holding an escape sequence', async () => {
    const stateDir = await tempDir('bermd-move-');
    try {
      // A state directory holding one image whose only record is not JSON: the reader's message quotes it.
      await mkdir(path.join(stateDir, 'harnesses'), { recursive: true });
      const image = await buildImage('(module)', ['x\u001b[31mred\u009b0m']);
      await writeFile(path.join(stateDir, 'harnesses', 'bad.wasm'), image);
      const move = await launchDaemon({ command: ['migrate-store', '--from', stateDir, '--to', db] });
      // One harness was not moved: exit 1, with each harness said.
      expect(await exited(move.process)).toBe(1);
      const line = move
        .stdout()
        .split('\n')
        .find((l) => l.startsWith('bad '));
      expect(line).toContain('not valid JSON');
      expect(line).toContain('x\\u001b[31mred\\u009b0m');
      expect(move.stdout()).not.toMatch(/[\u001b\u009b]/);
    } finally {
      await removeDir(stateDir);
    }
  });

  it('keeps the password of the connection string out of the log and the listening line', async () => {
    const url = new URL(db);
    url.password = 'hunter2-not-logged';
    // The test server trusts loopback: the password is sent, not needed.
    const d = await startDaemon({ store: url.href, args: ['--log-level', 'debug'] });
    try {
      await deploy(d.url, 'h', await harnessImage());
      await until('the deploy logged', async () => d.log().find((e) => e.msg === 'deployed harness'));
    } finally {
      await d.stop();
    }
    expect(d.stdout()).toBe(`bermd listening on ${d.url} (store: ${db})\n`);
    expect(d.stderr()).not.toContain('hunter2');
  });
});

describe('bermd --store and migrate-store flags', () => {
  async function refused(args: string[]): Promise<{ code: number | string; stderr: string }> {
    const launched = await launchDaemon({ command: args });
    const code = await exited(launched.process);
    return { code, stderr: launched.stderr() };
  }

  it('refuses --state beside --store, a URL that is not PostgreSQL (without quoting it), and store flags without a store', async () => {
    const dir = await tempDir();
    try {
      const both = await refused(['--state', dir, '--store', 'postgres://berm@127.0.0.1:1/x']);
      expect(both).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('bermd: --state and --store each name where the deployed set is kept: give one'),
      });
      const notPg = await refused(['--store', 'mysql://root:sekrit@db/x']);
      expect(notPg.code).toBe(2);
      expect(notPg.stderr).toContain('bermd: --store: expected a PostgreSQL URL such as postgres://USER@HOST:5432/DB');
      expect(notPg.stderr).not.toContain('sekrit');
      const waitAlone = await refused(['--state', dir, '--store-wait', '5s']);
      expect(waitAlone).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('bermd: --store-wait applies to a --store database only'),
      });
    } finally {
      await removeDir(dir);
    }
  });

  it('migrate-store refuses a --from that holds no deployed set, and a missing --to', async () => {
    const dir = await tempDir();
    try {
      const empty = await refused(['migrate-store', '--from', dir, '--to', POSTGRES_URL ?? 'postgres://berm@127.0.0.1:1/x']);
      expect(empty).toMatchObject({
        code: 2,
        stderr: `bermd migrate-store: --from ${dir}: no deployed set there (no harnesses/ directory)\n`,
      });
      const noTo = await refused(['migrate-store', '--from', dir]);
      expect(noTo).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('bermd migrate-store: migrate-store needs --from DIR and --to URL'),
      });
    } finally {
      await removeDir(dir);
    }
  });
});
