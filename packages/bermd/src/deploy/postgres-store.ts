/**
 * The deployed set in PostgreSQL, shared by every bermd replica pointed at the same database
 * (`--store postgres://...`), through node-postgres (`pg`).
 *
 * `berm_harness` holds a row per name: the image (the source of truth), its digest and manifest, the
 * operator's bindings for it, the deploy time and who deployed it, and a revision drawn from a sequence
 * on every deploy.
 * `berm_history` holds each name's deploy history, past its undeploy (`postgres-history.ts`).
 * `berm_usage` holds, per name, when each tool ran and each event was emitted last. The store is this
 * class and, beside it, a module per concern:
 *
 * - `postgres-url.ts`: the connection string as bermd shows it (never its password);
 * - `postgres-errors.ts`: what a failure means, out of reach (`store-unavailable`) or a refusal;
 * - `postgres-wait.ts`: the wait for the database at start (`--store-wait`);
 * - `postgres-rows.ts`: the rows and the statements the store and its transactions share;
 * - `postgres-transaction.ts`: a deploy's or undeploy's hold on a name, under an advisory lock;
 * - `postgres-notification.ts`: what a notification carries, a name and a kind of change, never the data;
 * - `postgres-listener.ts`: the listening connection, which reconnects when it is lost;
 * - `postgres-schema.ts`: the schema's migrations;
 * - `postgres-sessions.ts`: the 2025-era MCP sessions (`berm_session`), which any replica serves;
 * - `postgres-receipts.ts`: the receipts of external writes (`berm_receipt`), which decide which replica runs a call.
 *
 * Every deploy, undeploy and usage write notifies `berm_harness` in its transaction (delivered on
 * commit). Each replica listens on a connection of its own, outside the pool; on every (re)connection
 * the registry compares its whole set with the store, for what it missed. What a replica takes in is
 * read from the tables (the source of truth), never from a payload: a message that does not name a
 * harness and a change is ignored, and one that does costs one read of that harness's row.
 *
 * A database out of reach answers `store-unavailable` (503) to what needs it; the pool and the
 * listening connection never end the process. The connection string's password is never logged: the
 * store is named by `location`, which leaves it out.
 */
import { isHarnessName, settingByFlag } from '@berm/protocol';
import type pg from 'pg';
import type { Logger } from 'pino';
import { emptyUsage, type UsageRecord } from './gate.js';
import type { HistoryPage, HistoryQuery, RetainedImage, UndeployedName } from './history.js';
import { decodeSource } from './history.js';
import { reasonOf, storeFailure } from './postgres-errors.js';
import { pruneHistory, readHistory, readUndeployed } from './postgres-history.js';
import { StoreListener } from './postgres-listener.js';
import { encodeNotification } from './postgres-notification.js';
import {
  addUse,
  HARNESS_SELECT,
  HEAD_SELECT,
  type HarnessRow,
  type HeadRow,
  headsOf,
  latestUse,
  MERGE_USAGE,
  type UseRow,
  usageArrays,
  type Query,
} from './postgres-rows.js';
import { CHANNEL, migrate } from './postgres-schema.js';
import { PostgresSessions } from './postgres-sessions.js';
import { PostgresReceipts } from './postgres-receipts.js';
import { forgetIfStale, holdName, type HoldOptions } from './postgres-transaction.js';
import { pruneRetained, readRetainedBytes, readRetainedList } from './postgres-retained.js';
import { forgotten, retentionCutoff, retentionPolicy, type RetentionPolicy } from './retention.js';
import { storeLocation } from './postgres-url.js';
import { waitForStore } from './postgres-wait.js';
import type { HarnessMeta, HarnessStore, StoredHarness, StoredHead, StoreTransaction, StoreWatcher } from './store.js';
import { decodeBindings, decodeDeployedBy, decodeUseTime } from './store-codec.js';
import { checkAgainstImage } from './store-repair.js';
import { numberDefault } from '../limits.js';

/**
 * How long the database may take to answer before it counts as out of reach (`--store-timeout`): a new
 * connection, or a statement's whole answer (an image's bytes included). A path that went silent (a
 * partition, a stalled proxy) sends nothing back, not even an error; this is what ends the wait, since TCP
 * keepalive probes only an idle connection and the kernel retransmits unacknowledged data for minutes
 * (TCP_USER_TIMEOUT would bound that, and Node has no portable setter for it).
 */
export const DEFAULT_STORE_TIMEOUT_MS = numberDefault('store-timeout');
/** The longest `--store-timeout`: the timers it sets hold at most 2^31 ms, and an hour of silence is an outage. */
export const MAX_STORE_TIMEOUT_MS = settingByFlag('store-timeout')!.max!;
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
/** Connections a replica keeps: deploys hold one for their transaction, usage writes and reads take one briefly. */
const POOL_SIZE = 8;

export interface PostgresStoreOptions {
  logger: Logger;
  /** How long to wait at start for a database that does not answer before giving up (`--store-wait`); 0: one try. */
  waitMs?: number;
  /** How long the database may take to answer before it counts as out of reach (`--store-timeout`); `DEFAULT_STORE_TIMEOUT_MS` when unset. */
  timeoutMs?: number;
  /** What is kept of what each name served before (`--keep-images`, `--history-retention`); `retentionPolicy()`'s defaults for what is unset. */
  retention?: Partial<RetentionPolicy>;
}

/**
 * The PostgreSQL driver, imported when a store is first opened rather than with this module: the module
 * is reached from the deploy room's door, which every bermd loads, and the driver is a share of a bare
 * start that a directory store never needs (docs/decisions.md).
 */
async function loadDriver(): Promise<typeof pg> {
  return (await import('pg')).default;
}

export class PostgresStore implements HarnessStore {
  readonly location: string;
  private readonly pool: pg.Pool;
  private readonly config: pg.ClientConfig;
  /** The driver, loaded by `open`: a bermd on a directory store never loads it. */
  private readonly driver: typeof pg;
  private readonly logger: Logger;
  private readonly listeners = new Set<StoreListener>();
  /** How long a connection or a statement may go unanswered (`--store-timeout`); the listening connection is probed this often. */
  private readonly timeoutMs: number;
  /** How long a deploy's wait for its name's lock may go unanswered: a lock another replica's deploy holds, or a silent path. */
  private readonly lockWaitMs: number;

  private readonly policy: RetentionPolicy;
  /** The MCP sessions every replica shares. */
  readonly sessions: PostgresSessions = new PostgresSessions((text, values) => this.query(text, values));
  /** The receipts of external writes every replica shares. */
  readonly receipts: PostgresReceipts;

  private constructor(driver: typeof pg, url: string, logger: Logger, timeoutMs: number, policy: RetentionPolicy) {
    this.driver = driver;
    this.location = storeLocation(url);
    this.policy = policy;
    this.receipts = new PostgresReceipts((text, values) => this.query(text, values), policy.receiptRetentionMs);
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
    this.pool = new driver.Pool({ ...this.config, max: POOL_SIZE, idleTimeoutMillis: 30_000 });
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
    const store = new PostgresStore(
      await loadDriver(),
      url,
      options.logger,
      options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS,
      retentionPolicy(options.retention),
    );
    try {
      await waitForStore(() => migrate(store.pool, options.logger), {
        location: store.location,
        logger: options.logger,
        waitMs: options.waitMs ?? 0,
      });
    } catch (e) {
      await store.pool.end().catch(() => {});
      throw e;
    }
    return store;
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

  /** The row, checked against its image (`checkAgainstImage`); a repair is written back unless another deploy came first. */
  async load(name: string): Promise<StoredHarness | null> {
    const { rows } = await this.query<HarnessRow>(`${HARNESS_SELECT} WHERE name = $1`, [name]);
    const row = rows[0];
    if (row === undefined) return null;
    const used = emptyUsage();
    const uses = await this.query<UseRow>('SELECT kind, item, used_at FROM berm_usage WHERE harness = $1', [name]);
    const now = Date.now();
    for (const use of uses.rows) addUse(used, use, now);
    const deployedAt = row.deployed_at.toISOString();
    const stored: HarnessMeta = {
      name,
      digest: row.digest,
      deployed_at: deployedAt,
      last_used_at: decodeUseTime(row.last_used_at, now),
      used,
    };
    const by = decodeDeployedBy(row.deployed_by);
    if (by !== undefined) stored.deployed_by = by;
    const source = decodeSource(row.source);
    if (source !== undefined) stored.source = source;
    // A row holds the bindings of the one image it names.
    const bindings = decodeBindings(row.bindings);
    if (bindings !== undefined) stored.bindings = { [row.digest]: bindings };
    const check = checkAgainstImage(name, row.image, stored, deployedAt);
    if (check.repaired) {
      const own = check.meta.bindings?.[check.digest];
      // The repair names no deployer (`checkAgainstImage`): the one the row named deployed another image.
      await this.query(
        'UPDATE berm_harness SET digest = $2, manifest = COALESCE($3::jsonb, manifest), bindings = $4::jsonb, deployed_by = NULL, source = NULL WHERE name = $1 AND revision = $5',
        [
          name,
          check.digest,
          check.manifest === null ? null : JSON.stringify(check.manifest),
          own === undefined ? null : JSON.stringify(own),
          row.revision,
        ],
      );
    }
    return { name, bytes: row.image, digest: check.digest, meta: check.meta, revision: row.revision, repaired: check.repaired };
  }

  /** A row is whole or absent: nothing is ever left half-removed. */
  async sweep(): Promise<string[]> {
    return [];
  }

  async readImage(name: string): Promise<Buffer | null> {
    const { rows } = await this.query<{ image: Buffer }>('SELECT image FROM berm_harness WHERE name = $1', [name]);
    return rows[0]?.image ?? null;
  }

  transaction<T>(name: string, work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return holdName(this.pool, name, this.holdOptions(), work);
  }

  private holdOptions(): HoldOptions {
    return { location: this.location, lockWaitMs: this.lockWaitMs, policy: this.policy };
  }

  history(name: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    return readHistory((text, values) => this.query(text, values), name, query);
  }

  retained(name: string): Promise<RetainedImage[]> {
    return readRetainedList((text, values) => this.query(text, values), name, this.policy.keepImages);
  }

  readRetained(name: string, digest: string): Promise<Buffer | null> {
    return readRetainedBytes((text, values) => this.query(text, values), name, digest);
  }

  async undeployed(): Promise<UndeployedName[]> {
    const cutoff = retentionCutoff(this.policy);
    const found = await readUndeployed((text, values) => this.query(text, values));
    return found
      .filter(({ entry }) => entry.action === 'undeploy' && !forgotten(entry, cutoff))
      .sort((a, b) => Date.parse(b.entry.at) - Date.parse(a.entry.at) || (a.name < b.name ? -1 : 1));
  }

  async prune(): Promise<string[]> {
    const query: Query = (text, values) => this.query(text, values);
    const cutoff = new Date(retentionCutoff(this.policy));
    const gone: string[] = [];
    for (const name of await pruneHistory(query, cutoff)) {
      if (await forgetIfStale(this.pool, name, cutoff, this.holdOptions())) gone.push(name);
    }
    await pruneRetained(query, this.policy.keepImages);
    return gone;
  }

  async saveUsage(name: string, used: UsageRecord, lastUsedAt: string | null): Promise<void> {
    const arrays = usageArrays(used);
    if (lastUsedAt === null && arrays[0].length === 0) return;
    await this.query(MERGE_USAGE, [name, lastUsedAt, ...arrays, latestUse(), CHANNEL, encodeNotification(name, 'usage')]);
  }

  /**
   * What the listening connection knows: it is probed every `--store-timeout` and reconnects when lost,
   * so a probe of readiness asks it rather than the database. Before watching starts, the pool answered
   * at open (`open` waits for it).
   */
  reachable(): boolean {
    for (const listener of this.listeners) if (!listener.reachable) return false;
    return true;
  }

  /** Listens on a connection of its own (`StoreListener`), until the answered stop or `close`. */
  watch(watcher: StoreWatcher): () => void {
    const listener = new StoreListener(
      {
        driver: this.driver,
        config: this.config,
        timeoutMs: this.timeoutMs,
        location: this.location,
        logger: this.logger,
        sessions: () => this.sessions.watcher,
      },
      watcher,
    );
    this.listeners.add(listener);
    return () => {
      listener.stop();
      this.listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    for (const listener of this.listeners) listener.stop();
    this.listeners.clear();
    await this.pool.end();
  }

  private async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      throw storeFailure(e, this.location);
    }
  }
}
