/**
 * The PostgreSQL store's history: `berm_history`, one row per entry, its id from the revision sequence.
 * An entry is appended on the deploy's or undeploy's own connection, inside its transaction, so it
 * commits with the change or not at all; the name's oldest entries past MAX_HISTORY_ENTRIES go in the
 * same transaction, so the table stays bounded without a separate job.
 */
import type pg from 'pg';
import type { Query } from './postgres-rows.js';
import {
  cursorPosition,
  decodeEntry,
  encodeCursor,
  type HistoryEntry,
  type HistoryPage,
  type HistoryQuery,
  MAX_HISTORY_ENTRIES,
  pageSize,
  type UndeployedName,
} from './history.js';

/**
 * Appends `entry` to `name`'s history on `client`, inside its open transaction, and drops what is past
 * the bounds: the count, and entries made before `cutoff` (the new one, the newest, always stays).
 */
export async function appendHistory(client: pg.PoolClient, name: string, entry: HistoryEntry, cutoff: Date): Promise<void> {
  await client.query('INSERT INTO berm_history (harness, at, entry) VALUES ($1, $2, $3::jsonb)', [name, entry.at, JSON.stringify(entry)]);
  await client.query(
    `DELETE FROM berm_history WHERE harness = $1 AND (at < $3 AND id < (SELECT max(id) FROM berm_history WHERE harness = $1) OR id <= (
       SELECT id FROM berm_history WHERE harness = $1 ORDER BY id DESC OFFSET $2 LIMIT 1))`,
    [name, MAX_HISTORY_ENTRIES, cutoff],
  );
}

/** Names with history and no stored image, each with its newest entry. */
export async function readUndeployed(query: Query): Promise<UndeployedName[]> {
  const { rows } = await query<{ harness: string; entry: unknown }>(
    `SELECT DISTINCT ON (h.harness) h.harness, h.entry FROM berm_history h
     WHERE NOT EXISTS (SELECT 1 FROM berm_harness WHERE name = h.harness) ORDER BY h.harness, h.id DESC`,
  );
  const found: UndeployedName[] = [];
  for (const row of rows) {
    const entry = decodeEntry(row.entry);
    if (entry !== null) found.push({ name: row.harness, entry });
  }
  return found;
}

/** Drops every name's entries made before `cutoff`, each name's newest aside; answers the names whose newest is that old too. */
export async function pruneHistory(query: Query, cutoff: Date): Promise<string[]> {
  await query(`DELETE FROM berm_history h WHERE h.at < $1 AND h.id < (SELECT max(id) FROM berm_history x WHERE x.harness = h.harness)`, [
    cutoff,
  ]);
  const { rows } = await query<{ harness: string }>(
    `SELECT harness FROM berm_history h GROUP BY harness HAVING max(at) < $1
     AND NOT EXISTS (SELECT 1 FROM berm_harness WHERE name = h.harness) ORDER BY harness COLLATE "C"`,
    [cutoff],
  );
  return rows.map((r) => r.harness);
}

/** A page of `name`'s history, newest first (see `HarnessStore.history`). */
export async function readHistory(query: Query, name: string, q: HistoryQuery): Promise<HistoryPage> {
  const before = cursorPosition(name, q);
  const limit = pageSize(q);
  // One more than the page, to tell whether an older page exists.
  const { rows } = await query<{ position: string; entry: unknown }>(
    // Ordered by the column, not the output's text of it (which would put 10 before 8).
    `SELECT h.id::text AS position, h.entry FROM berm_history h WHERE h.harness = $1 AND ($2::bigint IS NULL OR h.id < $2)
     ORDER BY h.id DESC LIMIT $3`,
    [name, before ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  const entries = page.map((r) => decodeEntry(r.entry)).filter((e): e is HistoryEntry => e !== null);
  const last = page.at(-1);
  return { entries, next_cursor: rows.length > limit && last !== undefined ? encodeCursor(Number(last.position)) : null };
}
