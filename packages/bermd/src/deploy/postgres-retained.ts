/**
 * The PostgreSQL store's retained images: `berm_image`, a row per harness and digest, written on the
 * deploy's or undeploy's own connection inside its transaction, so an image is kept exactly when the
 * change that replaced it committed. The row being replaced is copied as it stands (image, bindings) by
 * one statement, with no round trip of its bytes through bermd, and the source it was deployed from with it.
 *
 * "Most recently served first" is the order of `seq`, drawn from the revision sequence under the name's
 * lock as each image is kept, not of `retained_at`: that is the clock of the replica that replaced the
 * image, and replicas' clocks may disagree, so a time order could put an older image first and send
 * `steps: 1` to the wrong one.
 */
import type pg from 'pg';
import { digestOf } from './checks.js';
import type { Query } from './postgres-rows.js';
import type { HistoryEntry, RetainedImage } from './history.js';
import { decodeRetained } from './retention.js';

/** Keeps the image stored under `name` unless it is `next` (a redeploy of it), as `entry` replaces or removes it. */
export async function retainCurrent(client: pg.PoolClient, name: string, entry: HistoryEntry, next: string | null): Promise<void> {
  await client.query(
    `INSERT INTO berm_image (harness, digest, image, version, bindings, retained_at, source)
     SELECT name, digest, image, CASE WHEN digest = $3 THEN $4 END, bindings, $2::timestamptz,
       CASE WHEN source_revision = revision THEN source END
     FROM berm_harness WHERE name = $1 AND digest IS DISTINCT FROM $5
     ON CONFLICT (harness, digest) DO UPDATE
       SET version = excluded.version, bindings = excluded.bindings, retained_at = excluded.retained_at, seq = excluded.seq,
         source = excluded.source`,
    [name, entry.at, entry.from?.digest ?? null, entry.from?.version ?? null, next],
  );
}

/** Keeps the `keep` most recent of `name`'s images other than `served`. */
export async function trimRetained(client: pg.PoolClient, name: string, keep: number, served: string | null): Promise<void> {
  await client.query(
    `DELETE FROM berm_image WHERE harness = $1 AND (digest = $2 OR digest NOT IN (
       SELECT digest FROM berm_image WHERE harness = $1 AND digest IS DISTINCT FROM $2 ORDER BY seq DESC LIMIT $3))`,
    [name, served, keep],
  );
}

/** `name`'s retained images, most recently served first: `deployedKeep` of them for a deployed name, one more for an undeployed one. */
export async function readRetainedList(query: Query, name: string, deployedKeep: number): Promise<RetainedImage[]> {
  const { rows } = await query<{ digest: string; version: string | null; bindings: unknown; retained_at: Date; source: unknown }>(
    `SELECT i.digest, i.version, i.bindings, i.retained_at, i.source FROM berm_image i
     WHERE i.harness = $1 AND i.digest IS DISTINCT FROM (SELECT digest FROM berm_harness WHERE name = $1)
     ORDER BY i.seq DESC
     LIMIT CASE WHEN EXISTS (SELECT 1 FROM berm_harness WHERE name = $1) THEN $2 ELSE $2 + 1 END`,
    [name, deployedKeep],
  );
  return rows.map((r) => decodeRetained({ ...r, retained_at: r.retained_at.toISOString() })).filter((r): r is RetainedImage => r !== null);
}

/**
 * The bytes of an image `name` serves or keeps, by digest; null when neither. Checked against the digest,
 * as the directory store checks its files: a row changed behind bermd's back is no image of that digest,
 * and a rollback to it would serve something else under the name.
 */
export async function readRetainedBytes(query: Query, name: string, digest: string): Promise<Buffer | null> {
  const { rows } = await query<{ image: Buffer }>(
    `SELECT image FROM berm_harness WHERE name = $1 AND digest = $2
     UNION ALL SELECT image FROM berm_image WHERE harness = $1 AND digest = $2`,
    [name, digest],
  );
  return rows.find((r) => digestOf(r.image) === digest)?.image ?? null;
}

/** Trims every name's images to the policy (it may have been lowered since they were written), and drops those of names nothing else remembers. */
export async function pruneRetained(query: Query, deployedKeep: number): Promise<void> {
  await query(
    `DELETE FROM berm_image i USING (
       SELECT harness, digest, row_number() OVER (PARTITION BY harness ORDER BY seq DESC) AS n FROM berm_image) r
     WHERE i.harness = r.harness AND i.digest = r.digest AND (
       r.n > CASE WHEN EXISTS (SELECT 1 FROM berm_harness WHERE name = i.harness) THEN $1 ELSE $1 + 1 END
       OR NOT EXISTS (SELECT 1 FROM berm_harness WHERE name = i.harness) AND NOT EXISTS (SELECT 1 FROM berm_history WHERE harness = i.harness))`,
    [deployedKeep],
  );
}
