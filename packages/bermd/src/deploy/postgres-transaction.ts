/**
 * A deploy's or undeploy's hold on one name in the PostgreSQL store: one transaction on a connection of
 * the pool, under a transaction-scoped advisory lock on the name taken before the current row is read,
 * so two deploys of one name through two replicas run one after the other and the second reads what the
 * first committed. A stop anywhere leaves the committed row: the old harness or the new. A write
 * notifies the channel inside the transaction, so the replicas hear of it on commit.
 */
import type pg from 'pg';
import { reached } from '../faults.js';
import { storeFailure } from './postgres-errors.js';
import { encodeNotification } from './postgres-notification.js';
import { appendHistory } from './postgres-history.js';
import { HEAD_SELECT, type HeadRow, headsOf, latestUse, MERGE_USAGE_QUIETLY, SAVE, usageArrays, type Query } from './postgres-rows.js';
import { CHANNEL, inTransaction, LOCK_CLASS } from './postgres-schema.js';
import { readRetainedBytes, readRetainedList, retainCurrent, trimRetained } from './postgres-retained.js';
import { imagesKept, retentionCutoff, type RetentionPolicy } from './retention.js';
import type { StoreTransaction } from './store.js';

export interface HoldOptions {
  /** The store, named without its password, for `store-unavailable`. */
  location: string;
  /** What is kept of what the name served before. */
  policy: RetentionPolicy;
  /** How long the wait for the name's lock may go unanswered: another replica's deploy holds it for its whole transaction. */
  lockWaitMs: number;
}

/** Runs `work` holding `name` (see `HarnessStore.transaction`); a database out of reach is `store-unavailable`. */
export async function holdName<T>(
  pool: pg.Pool,
  name: string,
  { location, lockWaitMs, policy }: HoldOptions,
  work: (tx: StoreTransaction) => Promise<T>,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (e) {
    throw storeFailure(e, location);
  }
  let wrote: 'deploy' | 'undeploy' | undefined;
  try {
    const result = await inTransaction(client, async () => {
      // Taken before the row is read, and held to the commit: a deploy of the name through another
      // replica waits here, then reads what this one committed. It also covers a first deploy, which
      // has no row to lock.
      await client.query(lockQuery([LOCK_CLASS.name, name], lockWaitMs));
      const { rows } = await client.query<HeadRow>(`${HEAD_SELECT} WHERE h.name = $1`, [name]);
      const query: Query = (text, values) => client.query(text, values);
      const notify = (): Promise<unknown> => client.query('SELECT pg_notify($1, $2)', [CHANNEL, encodeNotification(name, 'harness')]);
      const tx: StoreTransaction = {
        current: headsOf(rows)[0] ?? null,
        readImage: async () =>
          (await client.query<{ image: Buffer }>('SELECT image FROM berm_harness WHERE name = $1', [name])).rows[0]?.image ?? null,
        save: async (bytes, meta, manifest, entry) => {
          const own = meta.bindings?.[meta.digest];
          // With nothing to keep, the copy would be written only to be trimmed in the same transaction:
          // a dead image's worth of rows per deploy until a vacuum.
          if (imagesKept(policy, true) > 0) await retainCurrent(client, name, entry, meta.digest);
          const { rows: saved } = await client.query<{ revision: string }>(SAVE, [
            name,
            meta.digest,
            Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
            JSON.stringify(manifest),
            own === undefined ? null : JSON.stringify(own),
            meta.deployed_at,
            meta.last_used_at,
            meta.deployed_by ?? null,
            meta.source === undefined ? null : JSON.stringify(meta.source),
          ]);
          await client.query(MERGE_USAGE_QUIETLY, [name, meta.last_used_at, ...usageArrays(meta.used), latestUse()]);
          await appendHistory(client, name, entry, new Date(retentionCutoff(policy)));
          await trimRetained(client, name, imagesKept(policy, true), meta.digest);
          await notify();
          reached('pg-deploy-written');
          wrote = 'deploy';
          return saved[0]!.revision;
        },
        remove: async (entry) => {
          await retainCurrent(client, name, entry, null);
          const { rowCount } = await client.query('DELETE FROM berm_harness WHERE name = $1', [name]);
          if (rowCount !== 0) await appendHistory(client, name, entry, new Date(retentionCutoff(policy)));
          await trimRetained(client, name, imagesKept(policy, false), null);
          reached('pg-undeploy-deleted');
          if (rowCount === 0) return false;
          await notify();
          wrote = 'undeploy';
          return true;
        },
        retained: () => readRetainedList(query, name, policy.keepImages),
        readRetained: (digest) => readRetainedBytes(query, name, digest),
      };
      return work(tx);
    });
    if (wrote !== undefined) reached(wrote === 'deploy' ? 'pg-deploy-committed' : 'pg-undeploy-committed');
    return result;
  } catch (e) {
    // After a failed COMMIT the outcome is unknown (it may have committed): the notification, or the
    // next reconciliation, tells every replica, this one included.
    throw storeFailure(e, location);
  }
}

/**
 * Forgets an undeployed name whose newest entry is older than `cutoff`, its history and images, under the
 * name's lock (a rollback bringing it back waits, then finds it gone or finds it deployed and left alone).
 * Answers whether it was forgotten.
 */
export async function forgetIfStale(pool: pg.Pool, name: string, cutoff: Date, { location, lockWaitMs }: HoldOptions): Promise<boolean> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (e) {
    throw storeFailure(e, location);
  }
  try {
    return await inTransaction(client, async () => {
      await client.query(lockQuery([LOCK_CLASS.name, name], lockWaitMs));
      const { rowCount } = await client.query(
        `DELETE FROM berm_history WHERE harness = $1 AND NOT EXISTS (SELECT 1 FROM berm_harness WHERE name = $1)
         AND (SELECT max(at) FROM berm_history WHERE harness = $1) < $2`,
        [name, cutoff],
      );
      if (rowCount === 0) return false;
      await client.query('DELETE FROM berm_image WHERE harness = $1', [name]);
      return true;
    });
  } catch (e) {
    throw storeFailure(e, location);
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
