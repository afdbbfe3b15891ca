/**
 * The PostgreSQL store's tables as bermd reads and writes them: the rows its statements answer, the
 * statements shared by the store and its transactions, and what a row becomes (a head, uses).
 *
 * Usage is merged in SQL, `GREATEST` per tool and event, so replicas writing their own uses of a name
 * lose none of each other's. Use times are read through the codec's `decodeUseTime`, as the directory
 * store's are: a stored time later than this machine's clock allows is no use, and a write replaces it.
 */
import { isHarnessName } from '@berm/protocol';
import type pg from 'pg';
import { emptyUsage, type UsageRecord } from './gate.js';
import type { StoredHead } from './store.js';
import { decodeUseTime, USE_CLOCK_SKEW_MS } from './store-codec.js';

/** A statement run on whatever connection the caller holds: the pool's, or a transaction's. */
export type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

export interface HeadRow {
  name: string;
  digest: string;
  revision: string;
  last_used_at: Date | null;
  kind: 'tool' | 'event' | null;
  item: string | null;
  used_at: Date | null;
}

export interface HarnessRow {
  name: string;
  digest: string;
  image: Buffer;
  bindings: unknown;
  deployed_at: Date;
  /** Null when unknown: see `HARNESS_SELECT`. */
  deployed_by: string | null;
  /** Null when none: see `HARNESS_SELECT`. */
  source: unknown;
  last_used_at: Date | null;
  revision: string;
}

export type UseRow = Pick<HeadRow, 'kind' | 'item' | 'used_at'>;

export const HEAD_SELECT = `
  SELECT h.name, h.digest, h.revision::text AS revision, h.last_used_at, u.kind, u.item, u.used_at
  FROM berm_harness h LEFT JOIN berm_usage u ON u.harness = h.name`;

/**
 * A row as the store reads it whole. Who deployed it counts only beside the revision it was written with
 * (migration 2 says why): a deploy that wrote a revision without a name is unknown.
 */
export const HARNESS_SELECT = `
  SELECT name, digest, image, bindings, deployed_at, last_used_at, revision::text AS revision,
    CASE WHEN deployed_by_revision = revision THEN deployed_by END AS deployed_by,
    CASE WHEN source_revision = revision THEN source END AS source
  FROM berm_harness`;

/** A deploy's row: one revision drawn, written both as the row's and as the one its deployer's name goes with. */
export const SAVE = `
  WITH next AS (SELECT nextval('berm_revision') AS revision)
  INSERT INTO berm_harness (name, digest, image, manifest, bindings, deployed_at, last_used_at, revision, deployed_by, deployed_by_revision, source, source_revision)
  SELECT $1::text, $2::text, $3::bytea, $4::jsonb, $5::jsonb, $6::timestamptz, $7::timestamptz, next.revision, $8::text, next.revision, $9::jsonb, next.revision FROM next
  ON CONFLICT (name) DO UPDATE SET
    digest = excluded.digest, image = excluded.image, manifest = excluded.manifest, bindings = excluded.bindings,
    deployed_at = excluded.deployed_at, last_used_at = GREATEST(berm_harness.last_used_at, excluded.last_used_at),
    revision = excluded.revision, deployed_by = excluded.deployed_by, deployed_by_revision = excluded.deployed_by_revision,
    source = excluded.source, source_revision = excluded.source_revision
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

export const MERGE_USAGE = mergeUsageSql(true);
export const MERGE_USAGE_QUIETLY = mergeUsageSql(false);

/** The latest use time a store may hold, for `$6` of the merge. */
export function latestUse(): string {
  return new Date(Date.now() + USE_CLOCK_SKEW_MS).toISOString();
}

/** Rows grouped by name; a name outside the rule (a row someone added by hand) is not a harness. */
export function headsOf(rows: HeadRow[]): StoredHead[] {
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

/** Adds a `berm_usage` row (or the join's empty side, which adds nothing) to `used`, if its time is one (`decodeUseTime`). */
export function addUse(used: UsageRecord, row: UseRow, now: number): void {
  const at = decodeUseTime(row.used_at, now);
  if (row.kind !== null && row.item !== null && at !== null) (row.kind === 'tool' ? used.tools : used.events)[row.item] = at;
}

/** A usage record as the three parallel arrays `unnest` takes. */
export function usageArrays(used: UsageRecord): [string[], string[], string[]] {
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
