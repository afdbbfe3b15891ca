/**
 * The deployed set in PostgreSQL, shared by every bermd replica pointed at the same database
 * (`--store postgres://...`), through node-postgres (`pg`).
 *
 * `berm_harness` holds a row per name: the image (the source of truth), its digest and manifest, the
 * operator's bindings for it, the deploy time, and a revision drawn from a sequence on every deploy.
 * `berm_usage` holds, per name, when each tool ran and each event was emitted last. A deploy writes its
 * row in one transaction, under a transaction-scoped advisory lock on the name taken before the current
 * row is read, so two deploys of one name through two replicas run one after the other and the second
 * reads what the first committed. A stop anywhere leaves the committed row: the old harness or the new.
 *
 * Every deploy, undeploy and usage write notifies `berm_harness` in its transaction (delivered on
 * commit). Each replica listens on a connection of its own, outside the pool, and reconnects when it is
 * lost; on every (re)connection the registry compares its whole set with the store, for what it missed.
 *
 * A notification says what changed, never the data: `{"name": NAME, "what": "harness" | "usage"}`. Any
 * role that can connect may `NOTIFY` on the channel without a right on bermd's tables, so what a replica
 * takes in is read from the tables (the source of truth), never from a payload: a message that does not
 * name a harness and a change is ignored, and one that does costs one read of that harness's row.
 *
 * Usage is merged in SQL, `GREATEST` per tool and event, so replicas writing their own uses of a name
 * lose none of each other's. Use times are read through the codec's `decodeUseTime`, as the directory
 * store's are: a stored time later than this machine's clock allows is no use, and a write replaces it.
 *
 * A database out of reach answers `store-unavailable` (503) to what needs it; the pool and the
 * listening connection never end the process. The connection string's password is never logged: the
 * store is named by `location`, which leaves it out.
 */
import { Manifest } from '@berm/manifest';
import { ApiError, isHarnessName } from '@berm/protocol';
import pg from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';
import type { Logger } from 'pino';
import { BermdError } from '../errors.js';
import { reached } from '../faults.js';
import { digestOf } from './checks.js';
import { emptyUsage, type UsageRecord } from './gate.js';
import { CHANNEL, inTransaction, LOCK_CLASS, migrate } from './postgres-schema.js';
import type { HarnessMeta, HarnessStore, StoredHarness, StoredHead, StoreTransaction, StoreWatcher } from './store.js';
import { decodeBindings, decodeUseTime, USE_CLOCK_SKEW_MS } from './store-codec.js';

/**
 * How long the database may take to answer before it counts as out of reach (`--store-timeout`): a new
 * connection, or a statement's whole answer (an image's bytes included). A path that went silent (a
 * partition, a stalled proxy) sends nothing back, not even an error; this is what ends the wait, since TCP
 * keepalive probes only an idle connection and the kernel retransmits unacknowledged data for minutes
 * (TCP_USER_TIMEOUT would bound that, and Node has no portable setter for it).
 */
export const DEFAULT_STORE_TIMEOUT_MS = 10_000;
/** The longest `--store-timeout`: the timers it sets hold at most 2^31 ms, and an hour of silence is an outage. */
export const MAX_STORE_TIMEOUT_MS = 3_600_000;
/**
 * How long a deploy waits for its name's lock: a deploy of the same name through another replica holds
 * it for its whole transaction (gate, preparation, the image's write), so longer than one statement.
 */
const LOCK_WAIT_MS = 60_000;
/** TCP keepalive from this much idle time, so that the kernel notices a host that vanished and NATs keep the connection. */
const KEEPALIVE_IDLE_MS = 10_000;
/**
 * The server ends a session of bermd's left idle inside a transaction this long: a replica cut off in the
 * middle of a deploy would otherwise hold its name's lock, and stall every deploy of that name, until the
 * server's own TCP gives up on it (hours with the kernel's defaults). bermd's transactions never wait on
 * anything but the database and their own preparation.
 */
const IDLE_IN_TRANSACTION_MS = 60_000;
/** The listening connection's `application_name`: an operator (or a test) finds it in `pg_stat_activity` by it. */
export const LISTEN_APPLICATION_NAME = 'bermd-listen';
/** Connections a replica keeps: deploys hold one for their transaction, usage writes and reads take one briefly. */
const POOL_SIZE = 8;
/** The listening connection's retries: from the first delay, doubling, to the last. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_LAST_MS = 5000;
/** While waiting for the database at start: the first retry's delay, doubling to the last. */
const WAIT_FIRST_MS = 250;
const WAIT_LAST_MS = 2000;

export interface PostgresStoreOptions {
  logger: Logger;
  /** How long to wait at start for a database that does not answer before giving up (`--store-wait`); 0: one try. */
  waitMs?: number;
  /** How long the database may take to answer before it counts as out of reach (`--store-timeout`); `DEFAULT_STORE_TIMEOUT_MS` when unset. */
  timeoutMs?: number;
}

/** Only these schemes name a PostgreSQL store. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** `postgres://user@host:port/db`: the store named without its password or parameters, for logs and messages. */
export function storeLocation(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username === '' ? '' : `${decodeURIComponent(u.username)}@`;
    return `${u.protocol}//${user}${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(unreadable URL)';
  }
}

/**
 * The password the connection string holds, in every form the log could show it: as written, as the
 * URL reads it, percent-decoded, and as node-postgres' own parser reads it (what it sends the server).
 * They differ when the text is not valid percent-encoding (`pa%zz`): decodeURIComponent throws on it,
 * while pg-connection-string re-encodes the whole string first and sends `pa%zz` as written. Empty
 * when the URL holds none.
 */
export function storePasswords(url: string): string[] {
  const found = new Set<string>();
  const add = (read: () => string | null | undefined): void => {
    try {
      const value = read();
      if (typeof value === 'string' && value !== '') found.add(value);
    } catch {
      // A form that does not read is not what anything sends or shows.
    }
  };
  // The authority ends at the first `/`, `?` or `#`, its user information at its last `@`.
  const written = /^[^:]*:\/\/[^:/?#@]*:([^/?#]*)@/.exec(url)?.[1];
  add(() => written);
  add(() => decodeURIComponent(written ?? ''));
  add(() => new URL(url).password);
  add(() => decodeURIComponent(new URL(url).password));
  add(() => new URL(url).searchParams.get('password'));
  add(() => parseConnectionString(url).password);
  return [...found];
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** SQLSTATEs of a server going away or not taking connections yet (class 08 is every connection exception). */
const SERVER_GONE = new Set(['57P01', '57P02', '57P03', '53300']);
const GONE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Client was closed|connection is closed/i;

/** Whether `e` says the database cannot be reached now (as opposed to refusing what was asked). */
export function isUnreachable(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_GONE.has(code) || code.startsWith('08'))) return true;
  return e instanceof Error && GONE_MESSAGE.test(e.message);
}

/** What went wrong, in words that hold no connection parameter: the code and the message only. */
export function reasonOf(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

interface HeadRow {
  name: string;
  digest: string;
  revision: string;
  last_used_at: Date | null;
  kind: 'tool' | 'event' | null;
  item: string | null;
  used_at: Date | null;
}

interface HarnessRow {
  name: string;
  digest: string;
  image: Buffer;
  bindings: unknown;
  deployed_at: Date;
  last_used_at: Date | null;
  revision: string;
}

const HEAD_SELECT = `
  SELECT h.name, h.digest, h.revision::text AS revision, h.last_used_at, u.kind, u.item, u.used_at
  FROM berm_harness h LEFT JOIN berm_usage u ON u.harness = h.name`;

const SAVE = `
  INSERT INTO berm_harness (name, digest, image, manifest, bindings, deployed_at, last_used_at, revision)
  VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, nextval('berm_revision'))
  ON CONFLICT (name) DO UPDATE SET
    digest = excluded.digest, image = excluded.image, manifest = excluded.manifest, bindings = excluded.bindings,
    deployed_at = excluded.deployed_at, last_used_at = GREATEST(berm_harness.last_used_at, excluded.last_used_at),
    revision = excluded.revision
  RETURNING revision::text AS revision`;

/**
 * Uses merged into a stored name's, the later time winning; nothing when the name is not stored (an
 * undeploy won). A stored time after `$6` (this machine's clock plus USE_CLOCK_SKEW_MS) is no use, as
 * reading it says (`decodeUseTime`): the write replaces it rather than keeping it forever. A usage write
 * notifies the replicas; a deploy's does not, as its own notification makes them read the whole row.
 */
function mergeUsageSql(notify: boolean): string {
  return `
  WITH h AS (
    UPDATE berm_harness SET last_used_at = GREATEST(CASE WHEN last_used_at <= $6::timestamptz THEN last_used_at END, $2::timestamptz)
    WHERE name = $1 RETURNING name
  ), u AS (
    INSERT INTO berm_usage (harness, kind, item, used_at)
    SELECT h.name, x.kind, x.item, x.used_at FROM h, unnest($3::text[], $4::text[], $5::timestamptz[]) AS x (kind, item, used_at)
    ON CONFLICT (harness, kind, item) DO UPDATE
      SET used_at = GREATEST(CASE WHEN berm_usage.used_at <= $6::timestamptz THEN berm_usage.used_at END, excluded.used_at)
  )
  ${notify ? 'SELECT pg_notify($7, $8) FROM h' : 'SELECT count(*) FROM h'}`;
}

/** The latest use time a store may hold, for `$6` of the merge. */
function latestUse(): string {
  return new Date(Date.now() + USE_CLOCK_SKEW_MS).toISOString();
}
const MERGE_USAGE = mergeUsageSql(true);
const MERGE_USAGE_QUIETLY = mergeUsageSql(false);

export class PostgresStore implements HarnessStore {
  readonly location: string;
  private readonly pool: pg.Pool;
  private readonly config: pg.ClientConfig;
  private readonly logger: Logger;
  private watchers = new Set<() => void>();
  /** How long a connection or a statement may go unanswered (`--store-timeout`); the listening connection is probed this often. */
  private readonly timeoutMs: number;
  /** How long a deploy's wait for its name's lock may go unanswered: a lock another replica's deploy holds, or a silent path. */
  private readonly lockWaitMs: number;

  private constructor(url: string, logger: Logger, timeoutMs: number) {
    this.location = storeLocation(url);
    this.logger = logger;
    this.timeoutMs = timeoutMs;
    this.lockWaitMs = Math.max(LOCK_WAIT_MS, timeoutMs);
    this.config = {
      connectionString: url,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      // The server's side of the same bounds: it stops a statement bermd has stopped waiting for, and ends a
      // transaction left open by a replica that went away, whose name lock would otherwise outlive it.
      statement_timeout: this.lockWaitMs + timeoutMs,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
      application_name: 'bermd',
    };
    this.pool = new pg.Pool({ ...this.config, max: POOL_SIZE, idleTimeoutMillis: 30_000 });
    // A connection the server drops is an 'error' event; unheard, it would end the process. The pool
    // listens on idle ones; one checked out (a deploy's, between statements) needs its own listener, and
    // its next statement fails with the error anyway. Only the message is logged: the error carries the
    // client, whose parameters hold the password.
    this.pool.on('error', (e) => this.logger.debug({ err: reasonOf(e) }, 'an idle connection to the store was lost'));
    this.pool.on('connect', (client) => {
      client.on('error', (e) => this.logger.debug({ err: reasonOf(e) }, 'a connection to the store was lost'));
    });
  }

  /**
   * Connects, waiting up to `waitMs` for a database that does not answer yet (logging that it waits),
   * and brings the schema to this bermd's version. Throws `store-unavailable` when the wait runs out,
   * and what the database answered when it refuses (a wrong password, no such database, a newer schema).
   */
  static async open(url: string, options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(url, options.logger, options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS);
    const waitMs = options.waitMs ?? 0;
    const deadline = Date.now() + waitMs;
    let delay = WAIT_FIRST_MS;
    let told = false;
    for (;;) {
      try {
        await migrate(store.pool, options.logger);
        if (told) options.logger.info({ store: store.location }, 'the store answers; starting');
        return store;
      } catch (e) {
        const left = deadline - Date.now();
        if (!isUnreachable(e) || left <= 0) {
          await store.pool.end().catch(() => {});
          if (!isUnreachable(e)) throw e;
          throw new BermdError(
            'store-unavailable',
            `the store ${store.location} did not answer within ${waitMs / 1000}s (--store-wait): ${reasonOf(e)}`,
            { store: store.location },
          );
        }
        options.logger[told ? 'debug' : 'warn'](
          { store: store.location, err: reasonOf(e), wait_seconds: Math.round(waitMs / 1000) },
          'the store does not answer; waiting for it (up to --store-wait)',
        );
        told = true;
        // Waiting here is the point: the database is starting, or coming back.
        await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
        delay = Math.min(delay * 2, WAIT_LAST_MS);
      }
    }
  }

  async names(): Promise<string[]> {
    const { rows } = await this.query<{ name: string }>('SELECT name FROM berm_harness ORDER BY name COLLATE "C"');
    return rows.map((r) => r.name).filter(isHarnessName);
  }

  async heads(): Promise<StoredHead[]> {
    const { rows } = await this.query<HeadRow>(`${HEAD_SELECT} ORDER BY h.name COLLATE "C"`);
    return headsOf(rows);
  }

  async head(name: string): Promise<StoredHead | null> {
    const { rows } = await this.query<HeadRow>(`${HEAD_SELECT} WHERE h.name = $1`, [name]);
    return headsOf(rows)[0] ?? null;
  }

  /** The row, checked against its image: a digest (or manifest) that is not the image's is derived again from it, dropping bindings recorded for another image. */
  async load(name: string): Promise<StoredHarness | null> {
    const { rows } = await this.query<HarnessRow>(
      'SELECT name, digest, image, bindings, deployed_at, last_used_at, revision::text AS revision FROM berm_harness WHERE name = $1',
      [name],
    );
    const row = rows[0];
    if (row === undefined) return null;
    const used = emptyUsage();
    const uses = await this.query<UseRow>('SELECT kind, item, used_at FROM berm_usage WHERE harness = $1', [name]);
    const now = Date.now();
    for (const use of uses.rows) addUse(used, use, now);
    const digest = digestOf(row.image);
    const meta: HarnessMeta = {
      name,
      digest,
      deployed_at: row.deployed_at.toISOString(),
      last_used_at: decodeUseTime(row.last_used_at, now),
      used,
    };
    let repaired = false;
    if (row.digest !== digest) {
      repaired = true;
      let manifest: string | null = null;
      try {
        manifest = JSON.stringify(Manifest.fromImage(row.image).data);
      } catch {
        // An image whose manifest does not read is refused by the restore's checks; the column stays.
      }
      await this.query(
        'UPDATE berm_harness SET digest = $2, manifest = COALESCE($3::jsonb, manifest), bindings = NULL WHERE name = $1 AND revision = $4',
        [name, digest, manifest, row.revision],
      );
    } else {
      const bindings = decodeBindings(row.bindings);
      if (bindings !== undefined) meta.bindings = { [digest]: bindings };
    }
    return { name, bytes: row.image, digest, meta, revision: row.revision, repaired };
  }

  /** A row is whole or absent: nothing is ever left half-removed. */
  async sweep(): Promise<string[]> {
    return [];
  }

  async readImage(name: string): Promise<Buffer | null> {
    const { rows } = await this.query<{ image: Buffer }>('SELECT image FROM berm_harness WHERE name = $1', [name]);
    return rows[0]?.image ?? null;
  }

  async transaction<T>(name: string, work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw this.failure(e);
    }
    let wrote: 'deploy' | 'undeploy' | undefined;
    try {
      const result = await inTransaction(client, async () => {
        // Taken before the row is read, and held to the commit: a deploy of the name through another
        // replica waits here, then reads what this one committed. It also covers a first deploy, which
        // has no row to lock.
        await client.query(lockQuery([LOCK_CLASS.name, name], this.lockWaitMs));
        const { rows } = await client.query<HeadRow>(`${HEAD_SELECT} WHERE h.name = $1`, [name]);
        const current = headsOf(rows)[0] ?? null;
        const tx: StoreTransaction = {
          current,
          readImage: async () =>
            (await client.query<{ image: Buffer }>('SELECT image FROM berm_harness WHERE name = $1', [name])).rows[0]?.image ?? null,
          save: async (bytes, meta, manifest) => {
            const own = meta.bindings?.[meta.digest];
            const { rows: saved } = await client.query<{ revision: string }>(SAVE, [
              name,
              meta.digest,
              Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
              JSON.stringify(manifest),
              own === undefined ? null : JSON.stringify(own),
              meta.deployed_at,
              meta.last_used_at,
            ]);
            await client.query(MERGE_USAGE_QUIETLY, [name, meta.last_used_at, ...usageArrays(meta.used), latestUse()]);
            await client.query('SELECT pg_notify($1, $2)', [CHANNEL, payload(name, 'harness')]);
            reached('pg-deploy-written');
            wrote = 'deploy';
            return saved[0]!.revision;
          },
          remove: async () => {
            const { rowCount } = await client.query('DELETE FROM berm_harness WHERE name = $1', [name]);
            reached('pg-undeploy-deleted');
            if (rowCount === 0) return false;
            await client.query('SELECT pg_notify($1, $2)', [CHANNEL, payload(name, 'harness')]);
            wrote = 'undeploy';
            return true;
          },
        };
        return work(tx);
      });
      if (wrote !== undefined) reached(wrote === 'deploy' ? 'pg-deploy-committed' : 'pg-undeploy-committed');
      return result;
    } catch (e) {
      // After a failed COMMIT the outcome is unknown (it may have committed): the notification, or the
      // next reconciliation, tells every replica, this one included.
      throw this.failure(e);
    }
  }

  async saveUsage(name: string, used: UsageRecord, lastUsedAt: string | null): Promise<void> {
    const arrays = usageArrays(used);
    if (lastUsedAt === null && arrays[0].length === 0) return;
    await this.query(MERGE_USAGE, [name, lastUsedAt, ...arrays, latestUse(), CHANNEL, payload(name, 'usage')]);
  }

  /**
   * Listens on a connection of its own, probed every `timeoutMs` (a silent path delivers no notification
   * and no error: only a statement that goes unanswered tells), and reconnects when it is lost. While it
   * is lost this replica does not follow what the others change; deploys here are unaffected, since they
   * read the stored row and its usage inside their own transaction. Each (re)connection starts with a
   * comparison of the whole set (`resync`), for what was missed.
   */
  watch(watcher: StoreWatcher): () => void {
    let stopped = false;
    let client: pg.Client | undefined;
    let timer: NodeJS.Timeout | undefined;
    let probe: NodeJS.Timeout | undefined;
    let delay = RECONNECT_FIRST_MS;
    let lost = false;
    const retry = (): void => {
      if (stopped) return;
      timer = setTimeout(() => void listen(), delay);
      timer.unref();
      delay = Math.min(delay * 2, RECONNECT_LAST_MS);
    };
    const losing = (e: unknown): void => {
      if (!lost)
        this.logger.warn(
          { store: this.location, err: reasonOf(e) },
          "lost the store's notifications: changes made through other replicas are not followed until they are back; " +
            'deploys here do not depend on them (they read the store itself); reconnecting',
        );
      lost = true;
      retry();
    };
    /** Gives up on `c` (ended by the server, or silent) once, and reconnects. */
    const drop = (c: pg.Client, e: unknown): void => {
      if (client !== c || stopped) return;
      client = undefined;
      clearTimeout(probe);
      // With a probe unanswered, node-postgres destroys the socket rather than wait to say goodbye on it.
      void c.end().catch(() => {});
      losing(e);
    };
    const probeLater = (c: pg.Client): void => {
      probe = setTimeout(() => {
        c.query('SELECT 1').then(
          () => {
            if (client === c) probeLater(c);
          },
          (e: unknown) => drop(c, e),
        );
      }, this.timeoutMs);
      probe.unref();
    };
    const listen = async (): Promise<void> => {
      if (stopped) return;
      const c = new pg.Client({ ...this.config, application_name: LISTEN_APPLICATION_NAME });
      c.on('error', () => {}); // followed by 'end', where it is handled
      c.on('end', () => drop(c, new Error('Connection terminated')));
      c.on('notification', (n) => {
        if (n.channel === CHANNEL) this.notified(n.payload, watcher);
      });
      try {
        await c.connect();
        await c.query(`LISTEN ${CHANNEL}`);
      } catch (e) {
        void c.end().catch(() => {});
        losing(e);
        return;
      }
      if (stopped) {
        void c.end().catch(() => {});
        return;
      }
      client = c;
      delay = RECONNECT_FIRST_MS;
      probeLater(c);
      if (lost) this.logger.info({ store: this.location }, 'the store answers again: comparing the deployed set with it');
      lost = false;
      watcher.resync();
    };
    void listen();
    const stop = (): void => {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(probe);
      void client?.end().catch(() => {});
      this.watchers.delete(stop);
    };
    this.watchers.add(stop);
    return stop;
  }

  async close(): Promise<void> {
    for (const stop of [...this.watchers]) stop();
    await this.pool.end();
  }

  /** What a notification names, and nothing else of it: the payload is anyone's who can connect (see the header). */
  private notified(text: string | undefined, watcher: StoreWatcher): void {
    let message: unknown;
    try {
      message = JSON.parse(text ?? '');
    } catch {
      return;
    }
    const { name, what } = (typeof message === 'object' && message !== null ? message : {}) as { name?: unknown; what?: unknown };
    if (typeof name !== 'string' || !isHarnessName(name)) return;
    if (what === 'harness') watcher.harnessChanged(name);
    else if (what === 'usage') watcher.usageChanged(name);
  }

  private async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      throw this.failure(e);
    }
  }

  /** What a failure is answered as: the database out of reach is `store-unavailable`; a refusal of the work is itself. */
  private failure(e: unknown): unknown {
    if (e instanceof ApiError || !isUnreachable(e)) return e;
    return new BermdError('store-unavailable', `the store ${this.location} cannot be reached: ${reasonOf(e)}`, { store: this.location });
  }
}

/** The statement taking a name's lock, with a wait of its own (node-postgres reads `query_timeout` per query; its types leave it out). */
function lockQuery(values: [number, string], waitMs: number): pg.QueryConfig {
  const query: pg.QueryConfig & { query_timeout: number } = {
    text: 'SELECT pg_advisory_xact_lock($1, hashtext($2))',
    values,
    query_timeout: waitMs,
  };
  return query;
}

/** Rows grouped by name; a name outside the rule (a row someone added by hand) is not a harness. */
function headsOf(rows: HeadRow[]): StoredHead[] {
  const heads = new Map<string, StoredHead>();
  const now = Date.now();
  for (const row of rows) {
    if (!isHarnessName(row.name)) continue;
    let head = heads.get(row.name);
    if (head === undefined) {
      head = {
        name: row.name,
        digest: row.digest,
        revision: row.revision,
        last_used_at: decodeUseTime(row.last_used_at, now),
        used: emptyUsage(),
      };
      heads.set(row.name, head);
    }
    addUse(head.used, row, now);
  }
  return [...heads.values()];
}

type UseRow = Pick<HeadRow, 'kind' | 'item' | 'used_at'>;

/** Adds a `berm_usage` row (or the join's empty side, which adds nothing) to `used`, if its time is one (`decodeUseTime`). */
function addUse(used: UsageRecord, row: UseRow, now: number): void {
  const at = decodeUseTime(row.used_at, now);
  if (row.kind !== null && row.item !== null && at !== null) (row.kind === 'tool' ? used.tools : used.events)[row.item] = at;
}

/** A usage record as the three parallel arrays `unnest` takes. */
function usageArrays(used: UsageRecord): [string[], string[], string[]] {
  const kinds: string[] = [];
  const items: string[] = [];
  const times: string[] = [];
  for (const [kind, record] of [
    ['tool', used.tools],
    ['event', used.events],
  ] as const) {
    for (const [item, at] of Object.entries(record)) {
      kinds.push(kind);
      items.push(item);
      times.push(at);
    }
  }
  return [kinds, items, times];
}

/** A notification: which harness, and whether its row or its uses changed; the receivers read the rest. */
function payload(name: string, what: 'harness' | 'usage'): string {
  return JSON.stringify({ name, what });
}
