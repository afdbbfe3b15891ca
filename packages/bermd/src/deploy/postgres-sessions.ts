/**
 * The 2025-era MCP sessions in PostgreSQL (`berm_session`, schema 4): a row written at `initialize`,
 * read by a replica that receives a request for a session it does not hold, refreshed at most every half
 * idle period, updated by `logging/setLevel` and deleted by `DELETE /mcp`. Each change other replicas may
 * hold a copy of is notified on the store's channel in the same statement, so they drop or update it.
 * Expiry is the database's clock (`now()`), which every replica reads alike.
 */
import { encodeResourceNotification, encodeSessionNotification, MAX_PAYLOAD } from './postgres-notification.js';
import type { Query } from './postgres-rows.js';
import { CHANNEL } from './postgres-schema.js';
import type { SessionInit, SessionRecords, SessionWatcher, StoredSession } from './session-records.js';

interface SessionRow {
  key: string;
  owner: string;
  init: SessionInit;
  level: string | null;
  subscriptions: string[] | null;
  expires_in_ms: number;
}

const SELECT = `SELECT key, owner, init, level, subscriptions, (EXTRACT(EPOCH FROM expires_at - now()) * 1000)::float8 AS expires_in_ms
  FROM berm_session`;

function storedOf(row: SessionRow): StoredSession {
  const stored: StoredSession = { key: row.key, owner: row.owner, init: row.init, level: row.level, expiresInMs: row.expires_in_ms };
  if (Array.isArray(row.subscriptions) && row.subscriptions.length > 0)
    stored.subscriptions = row.subscriptions.filter((uri): uri is string => typeof uri === 'string');
  return stored;
}

export class PostgresSessions implements SessionRecords {
  private readonly watchers = new Set<SessionWatcher>();

  constructor(private readonly query: Query) {}

  /** Who hears of the other replicas' changes (the listener asks on each notification). */
  get watcher(): SessionWatcher | undefined {
    return this.watchers.values().next().value;
  }

  async create(record: { key: string; owner: string; init: SessionInit; level: string | null }, idleMs: number): Promise<void> {
    await this.query(
      `INSERT INTO berm_session (key, owner, init, level, expires_at) VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')`,
      [record.key, record.owner, JSON.stringify(record.init), record.level, idleMs],
    );
  }

  async read(key: string): Promise<StoredSession | null> {
    const { rows } = await this.query<SessionRow>(`${SELECT} WHERE key = $1 AND expires_at > now()`, [key]);
    return rows[0] === undefined ? null : storedOf(rows[0]);
  }

  async readMany(keys: readonly string[]): Promise<StoredSession[]> {
    if (keys.length === 0) return [];
    const { rows } = await this.query<SessionRow>(`${SELECT} WHERE key = ANY($1::text[]) AND expires_at > now()`, [keys]);
    return rows.map(storedOf);
  }

  async setLevel(key: string, level: string): Promise<void> {
    await this.query(
      `WITH changed AS (UPDATE berm_session SET level = $2 WHERE key = $1 RETURNING key)
       SELECT pg_notify($3, $4) FROM changed`,
      [key, level, CHANNEL, encodeSessionNotification({ key, what: 'session' })],
    );
  }

  async setSubscriptions(key: string, uris: readonly string[]): Promise<void> {
    await this.query(
      `WITH changed AS (UPDATE berm_session SET subscriptions = $2 WHERE key = $1 RETURNING key)
       SELECT pg_notify($3, $4) FROM changed`,
      [key, JSON.stringify(uris), CHANNEL, encodeSessionNotification({ key, what: 'session' })],
    );
  }

  async refresh(key: string, idleMs: number): Promise<void> {
    await this.query(`UPDATE berm_session SET expires_at = now() + $2 * interval '1 millisecond' WHERE key = $1`, [key, idleMs]);
  }

  async remove(key: string): Promise<void> {
    await this.query(
      `WITH gone AS (DELETE FROM berm_session WHERE key = $1 RETURNING key)
       SELECT pg_notify($2, $3) FROM gone`,
      [key, CHANNEL, encodeSessionNotification({ key, what: 'session' })],
    );
  }

  async cancel(key: string, ids: ReadonlyArray<string | number>): Promise<void> {
    const payload = encodeSessionNotification({ key, what: 'cancel', ids: [...ids] });
    // A cancel naming more than a notification holds would be refused whole; past the bound it is not sent.
    if (Buffer.byteLength(payload) > MAX_PAYLOAD) return;
    await this.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
  }

  async resourceUpdated(harness: string, path: string): Promise<void> {
    const payload = encodeResourceNotification(harness, path);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD) return;
    await this.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
  }

  async prune(): Promise<number> {
    const { rowCount } = await this.query('DELETE FROM berm_session WHERE expires_at <= now()');
    return rowCount ?? 0;
  }

  watch(watcher: SessionWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }
}
