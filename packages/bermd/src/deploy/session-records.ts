/**
 * What a store shared by replicas keeps of each 2025-era MCP session, so that any replica serves any
 * session (mcp/sessions.ts). A session is stored by its key, a digest of its id, never the id: the key
 * says which session a row or a notification is about, and is no use to a client. The directory store
 * (one process) keeps nothing: its sessions live in its memory alone.
 */

/** What a session's `initialize` asked, replayed where the session is rebuilt. */
export interface SessionInit {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown>;
}

export interface SessionRecord {
  key: string;
  /** The name of the principal that opened it: only its requests reach it. */
  owner: string;
  init: SessionInit;
  /** What `logging/setLevel` set last. */
  level: string | null;
  /** The resource URIs it subscribed to (`resources/subscribe`), as it gave them; absent for none. */
  subscriptions?: string[];
}

/** A record read back, with how long it has left before it expires unless refreshed. */
export interface StoredSession extends SessionRecord {
  expiresInMs: number;
}

/** Who hears, on each replica, of what another changed of a session. */
export interface SessionWatcher {
  /** The session's row changed (its log level, its subscriptions) or is gone (its client ended it): read it again. */
  sessionChanged(key: string): void;
  /** The session's client cancelled `ids`: stop them if they run here. */
  sessionCancelled(key: string, ids: ReadonlyArray<string | number>): void;
  /** Changes may have been missed (the store's channel was lost): read every session held again. */
  resync(): void;
  /** A replica said `harness`'s resource at `path` changed (`berm.resource_updated`): tell the sessions subscribed to it. */
  resourceChanged?(harness: string, path: string): void;
}

export interface SessionRecords {
  /** Writes a new session's record, expiring in `idleMs` unless refreshed. */
  create(record: SessionRecord, idleMs: number): Promise<void>;
  /** The record of `key`, unless it is gone or expired. */
  read(key: string): Promise<StoredSession | null>;
  /** The records of those of `keys` that are still there and unexpired. */
  readMany(keys: readonly string[]): Promise<StoredSession[]>;
  /** Writes the log level, and tells the other replicas. */
  setLevel(key: string, level: string): Promise<void>;
  /** Writes the resource URIs it is subscribed to, and tells the other replicas. */
  setSubscriptions(key: string, uris: readonly string[]): Promise<void>;
  /** Moves the expiry to `idleMs` from now. */
  refresh(key: string, idleMs: number): Promise<void>;
  /** Deletes the record, and tells the other replicas, which end their copies. */
  remove(key: string): Promise<void>;
  /** Tells the other replicas that the client cancelled `ids`. */
  cancel(key: string, ids: ReadonlyArray<string | number>): Promise<void>;
  /** Tells every replica, this one included, that `harness`'s resource at `path` changed. */
  resourceUpdated(harness: string, path: string): Promise<void>;
  /** Deletes expired records; answers how many. */
  prune(): Promise<number>;
  /** `watcher` hears of the other replicas' changes from now on, until the answered stop. */
  watch(watcher: SessionWatcher): () => void;
}
