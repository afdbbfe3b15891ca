/**
 * The PostgreSQL store's schema and its migrations, applied by bermd at start.
 *
 * `berm_schema` holds one row: the version the database is at. Migrations run in order, each in its own
 * transaction that also moves the version, under a transaction-scoped advisory lock, so replicas starting
 * at once apply each migration once (the second waits, then finds it applied). A database at a version
 * this bermd does not know (a newer bermd migrated it) is refused rather than guessed at.
 */
import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';

/** Advisory lock keys (two int4s): the class says whose lock it is, bermd's schema or one harness name. */
export const LOCK_CLASS = { schema: 0x6265726d, name: 0x6265726e } as const;

/** Where deploys and undeploys tell the replicas of a name that changed, usage writes what they wrote, and MCP sessions what changed of them. */
export const CHANNEL = 'berm_harness';

interface Migration {
  version: number;
  /** What it changes, for the log. */
  does: string;
  sql: string;
}

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    does: 'harnesses, their images and bindings, and their usage by tool and event',
    sql: `
      CREATE SEQUENCE berm_revision;
      CREATE TABLE berm_harness (
        name text PRIMARY KEY,
        digest text NOT NULL,
        image bytea NOT NULL,
        manifest jsonb NOT NULL,
        bindings jsonb,
        deployed_at timestamptz NOT NULL,
        last_used_at timestamptz,
        revision bigint NOT NULL
      );
      CREATE TABLE berm_usage (
        harness text NOT NULL REFERENCES berm_harness (name) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('tool', 'event')),
        item text NOT NULL,
        used_at timestamptz NOT NULL,
        PRIMARY KEY (harness, kind, item)
      );
      COMMENT ON TABLE berm_harness IS 'bermd: the deployed set, one row per harness name; image is the source of truth';
      COMMENT ON TABLE berm_usage IS 'bermd: when each tool ran and each event was emitted last, by harness name';
    `,
  },
  {
    version: 2,
    does: "who deployed each harness: the principal's name, and the revision it was written with",
    // A deploy through a replica still running an earlier bermd during an upgrade writes a new revision
    // and leaves deployed_by as it was: the name counts only beside the revision it was written with, so
    // such a deploy reads as unknown rather than as the previous deployer's. Rows from before read as unknown.
    sql: `
      ALTER TABLE berm_harness ADD COLUMN deployed_by text, ADD COLUMN deployed_by_revision bigint;
      COMMENT ON COLUMN berm_harness.deployed_by IS 'bermd: the principal whose deploy this is, when deployed_by_revision is revision; else unknown';
    `,
  },
  {
    version: 3,
    does: "each harness's deploy history, and the images it served before, kept past its undeploy",
    // No reference to berm_harness: an entry outlives the row it describes. Ids come from the revision
    // sequence, which a deploy already draws from, so a role granted what schema 1 and 2 needed needs
    // nothing more than the tables themselves; they order entries as they committed under a name's lock,
    // and kept images as they stopped being served (`retained_at` is the clock of the replica that
    // replaced one, which may disagree with another's).
    sql: `
      CREATE TABLE berm_history (
        id bigint PRIMARY KEY DEFAULT nextval('berm_revision'),
        harness text NOT NULL,
        at timestamptz NOT NULL,
        entry jsonb NOT NULL
      );
      CREATE INDEX berm_history_by_harness ON berm_history (harness, id);
      COMMENT ON TABLE berm_history IS 'bermd: every answered deploy, undeploy and rollback of each harness name, newest by id';
      CREATE TABLE berm_image (
        harness text NOT NULL,
        digest text NOT NULL,
        image bytea NOT NULL,
        version text,
        bindings jsonb,
        retained_at timestamptz NOT NULL,
        seq bigint NOT NULL DEFAULT nextval('berm_revision'),
        PRIMARY KEY (harness, digest)
      );
      COMMENT ON TABLE berm_image IS 'bermd: images each harness served before, with their bindings, for a rollback; the newest --keep-images are kept';
    `,
  },
  {
    version: 4,
    does: 'the 2025-era MCP sessions, so that any replica serves any session',
    // Keyed by a digest of the session id, never the id itself: what the database holds (and what its
    // channel carries) does not name a session a client could present. The expiry is the database's
    // clock, the one clock every replica reads alike.
    sql: `
      CREATE TABLE berm_session (
        key text PRIMARY KEY,
        owner text NOT NULL,
        init jsonb NOT NULL,
        level text,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX berm_session_by_expiry ON berm_session (expires_at);
      COMMENT ON TABLE berm_session IS 'bermd: each open 2025-era MCP session, by a digest of its id: its principal, its initialize, its log level';
    `,
  },
  {
    version: 5,
    does: 'the registry reference and manifest digest each harness was deployed from, and the revision they go with',
    // As deployed_by (migration 2): a deploy through a replica running an earlier bermd writes a revision
    // without touching source, so the source counts only beside the revision it was written with.
    sql: `
      ALTER TABLE berm_harness ADD COLUMN source jsonb, ADD COLUMN source_revision bigint;
      COMMENT ON COLUMN berm_harness.source IS 'bermd: {reference, digest} of the OCI artifact deployed, when source_revision is revision; else none';
    `,
  },
  {
    version: 6,
    does: 'the registry reference and manifest digest each kept image was deployed from, for a rollback to record again',
    // Copied from berm_harness by the statement that keeps an image, under the same condition its source
    // reads by there (source_revision = revision); images kept before this read as having none.
    sql: `
      ALTER TABLE berm_image ADD COLUMN source jsonb;
      COMMENT ON COLUMN berm_image.source IS 'bermd: {reference, digest} of the OCI artifact this image was deployed from; null when none';
    `,
  },
  {
    version: 7,
    does: 'the receipts of calls to external_write tools, so that a retry with the same idempotency key on any replica is answered from them',
    // The primary key decides, by INSERT ... ON CONFLICT DO NOTHING, which of two replicas runs a call;
    // no reference to berm_harness: a receipt outlives a redeploy, and an undeploy, within its retention.
    sql: `
      CREATE TABLE berm_receipt (
        principal text NOT NULL,
        harness text NOT NULL,
        tool text NOT NULL,
        key text NOT NULL,
        args_sha256 text NOT NULL,
        state text NOT NULL CHECK (state IN ('started', 'completed')),
        started_at timestamptz NOT NULL,
        replica text NOT NULL,
        attempt text NOT NULL,
        generated boolean NOT NULL,
        completed_at timestamptz,
        outcome text,
        code text,
        answer jsonb,
        answer_kept boolean NOT NULL DEFAULT true,
        PRIMARY KEY (harness, principal, tool, key)
      );
      CREATE INDEX berm_receipt_by_start ON berm_receipt (started_at);
      COMMENT ON TABLE berm_receipt IS 'bermd: one row per call of an external_write tool by (principal, harness, tool, idempotency key): its arguments digest, attempt, outcome and answer';
    `,
  },
  {
    version: 8,
    does: 'the resource URIs each 2025-era MCP session subscribed to, so that the replica serving its stream tells it of changes',
    sql: `
      ALTER TABLE berm_session ADD COLUMN subscriptions jsonb;
      COMMENT ON COLUMN berm_session.subscriptions IS 'bermd: the resource URIs the session subscribed to (resources/subscribe), as it gave them; null for none';
    `,
  },
];

/** The version this bermd brings a database to. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** A database whose schema this bermd cannot use. */
export class SchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaError';
  }
}

/** Brings the database to `SCHEMA_VERSION`, one migration per transaction. Throws what the database throws, or a `SchemaError`. */
export async function migrate(pool: Pool, logger: Logger): Promise<void> {
  for (;;) {
    const client = await pool.connect();
    const applied = await inTransaction(client, async (): Promise<Migration | undefined> => {
      await client.query('SELECT pg_advisory_xact_lock($1, 0)', [LOCK_CLASS.schema]);
      // Created under the lock (two replicas creating it at once would collide), and only when missing: once
      // migrated, a role that may only read and write the tables starts bermd.
      const { rows: found } = await client.query<{ t: string | null }>("SELECT to_regclass('berm_schema')::text AS t");
      if (found[0]!.t === null) {
        await client.query('CREATE TABLE berm_schema (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)');
        await client.query('INSERT INTO berm_schema (version) VALUES (0)');
      }
      const { rows } = await client.query<{ version: number }>('SELECT version FROM berm_schema');
      const version = rows[0]?.version ?? 0;
      if (version > SCHEMA_VERSION)
        throw new SchemaError(
          `the database's schema is at version ${version}, newer than this bermd knows (${SCHEMA_VERSION}): a newer bermd migrated it; run that one`,
        );
      const next = MIGRATIONS.find((m) => m.version === version + 1);
      if (next !== undefined) {
        await client.query(next.sql);
        await client.query('UPDATE berm_schema SET version = $1', [next.version]);
      }
      return next;
    });
    if (applied === undefined) return;
    logger.info({ version: applied.version, does: applied.does }, 'applied a schema migration to the store');
  }
}

/**
 * Runs `work` in a transaction on `client`, then releases it: committed, or rolled back and rethrown. A
 * client whose rollback failed too is broken (its connection lost), and is dropped rather than pooled;
 * so is one whose statement went unanswered (node-postgres' `query_timeout`), without a rollback, which
 * would wait behind that statement as long again: the server rolls back when the connection ends.
 */
export async function inTransaction<T>(client: PoolClient, work: () => Promise<T>): Promise<T> {
  try {
    await client.query('BEGIN');
    const result = await work();
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (e) {
    const broken =
      (e instanceof Error && e.message === UNANSWERED) ||
      (await client.query('ROLLBACK').then(
        () => false,
        () => true,
      ));
    client.release(broken);
    throw e;
  }
}

/** node-postgres' error for a statement unanswered within its `query_timeout`. */
export const UNANSWERED = 'Query read timeout';
