/**
 * Where the deployed set is kept, behind one interface: the registry holds the set in memory and writes
 * through a `HarnessStore`. `DirectoryStore` (directory-store.ts) keeps it in files under the state
 * directory, for one process; `PostgresStore` (postgres-store.ts) keeps it in a database that several
 * bermd replicas share. Every store keeps these promises, and one test suite holds both to them:
 *
 * - a deploy is atomic: after a stop at any point, `load` gives the old harness or the new one, never a
 *   torn one, and an image comes back with its own bindings (never another image's, never the defaults
 *   in their place);
 * - deploys and undeploys of one name are serialised by `transaction`, across every process that shares
 *   the store: the second sees what the first stored (its gate compares against it);
 * - the image is the source of truth: metadata that names another digest is derived again from it
 *   (`repaired`), keeping the usage, which belongs to the name, and the bindings recorded for that digest;
 * - usage only moves later: `saveUsage` merges, the later time winning for each tool and event, so
 *   processes writing their own uses of one name lose none of each other's;
 * - an undeploy that returned has removed the harness, and its usage, for good;
 * - history (history.ts): a deploy or undeploy that returned has its entry, appended in its own
 *   transaction, and one that failed has none; after a stop at any point, the newest entry agrees with
 *   what `load` finds (its `to` is the stored image, or null when nothing is stored). The history of a
 *   name outlives its undeploy; each name keeps at most MAX_HISTORY_ENTRIES entries, the oldest going first.
 * - retained images (retention.ts): the image a deploy replaces or an undeploy removes is kept, with its
 *   bindings, by that change (kept or not after a stop, never torn); `retained` never lists the image served,
 *   and lists at most `keepImages` (an undeployed name one more, the image it served last); `readRetained`
 *   answers bytes of the digest asked for or null, never bytes changed since. History older than the
 *   retention goes at the name's next write and at `prune`, a deployed name keeping its newest entry; an
 *   undeployed name past it is forgotten whole by `prune`, its history and images.
 *
 * The metadata's form on the wire of a store (JSON) is store-codec.ts, shared by every kind of store.
 */
import type { ReceiptStore } from './receipts.js';
import type { SessionRecords } from './session-records.js';
import type { ManifestData } from '@berm/manifest';
import type { Bindings, DeploySource } from '@berm/protocol';
import type { UsageRecord } from './gate.js';
import type { HistoryEntry, HistoryPage, HistoryQuery, RetainedImage, UndeployedName } from './history.js';

export type { RetentionPolicy } from './retention.js';

export interface HarnessMeta {
  name: string;
  digest: string;
  deployed_at: string;
  /**
   * The name of the principal whose deploy stored this image; absent when unknown (a record an earlier
   * bermd wrote, or one derived again from the image, whose deployer no record names).
   */
  deployed_by?: string;
  /** The registry reference and manifest digest the image was deployed from; absent for an image sent as a file, or unknown. */
  source?: DeploySource;
  last_used_at: string | null;
  /** Usage belongs to the name, not the image: it carries over a replace and a metadata repair. */
  used: UsageRecord;
  /** The operator's bindings by image digest; absent, or no entry for a digest, means the defaults. */
  bindings?: Record<string, Bindings>;
  /**
   * The directory store's: the history entry of the last deploy or undeploy written here, which joins
   * the history once its change is found to have taken effect (see directory-store.ts); others leave it out.
   */
  pending?: PendingEntry;
}

/** A history entry waiting on its change's commit point; `id` tells whether the history already has it. */
export interface PendingEntry {
  id: string;
  entry: HistoryEntry;
}

export interface StoredHarness {
  name: string;
  bytes: Buffer;
  digest: string;
  meta: HarnessMeta;
  /** Which deploy this is (see `StoredHead.revision`). */
  revision: string;
  /** True when the metadata was missing, unreadable or for another image, and was derived again. */
  repaired: boolean;
}

/** What a store holds under a name, without the image: enough to tell whether a process's copy is current. */
export interface StoredHead {
  name: string;
  digest: string;
  /** Differs between any two deploys of the name (a new image, or the same one with new bindings); opaque. */
  revision: string;
  last_used_at: string | null;
  used: UsageRecord;
}

/** A deploy's or undeploy's hold on one name (see `HarnessStore.transaction`). */
export interface StoreTransaction {
  /** What the store held under the name when the hold was taken; null when nothing. */
  readonly current: StoredHead | null;
  /** The image `current` describes. */
  readImage(): Promise<Buffer | null>;
  /**
   * Stores an image and its metadata (`meta.bindings` holds the new image's bindings, if any; `meta.used`
   * is merged as `saveUsage` merges); `manifest` is the image's, for a store that keeps it beside.
   * `entry` is appended to the name's history with the same commit. Answers the new revision.
   */
  save(bytes: Uint8Array, meta: HarnessMeta, manifest: ManifestData, entry: HistoryEntry): Promise<string>;
  /** Removes the harness and its usage, appending `entry` to its history with the same commit; false (and no entry) when nothing was stored. */
  remove(entry: HistoryEntry): Promise<boolean>;
  /** The images kept for the name besides `current`, most recently served first (see `HarnessStore.retained`). */
  retained(): Promise<RetainedImage[]>;
  /** A retained image's bytes (or `current`'s); null when the store keeps no image of that digest under the name. */
  readRetained(digest: string): Promise<Buffer | null>;
}

/** What a store that other processes share tells the registry of each (see `HarnessStore.watch`). */
export interface StoreWatcher {
  /** `name` was deployed or undeployed, maybe by this process: its revision tells. */
  harnessChanged(name: string): void;
  /** Uses of `name` were written, maybe by this process: the store has them (a notification never carries them). */
  usageChanged(name: string): void;
  /** Changes may have been missed (watching started, or the store was out of reach): look at every name again. */
  resync(): void;
}

export interface HarnessStore {
  /** Where the set is kept, for the log and the listening line; never holds a password. */
  readonly location: string;
  /** Names with a stored image, sorted. */
  names(): Promise<string[]>;
  /** Every stored harness's head, sorted by name. */
  heads(): Promise<StoredHead[]>;
  /** One stored harness's head; null when none is stored. */
  head(name: string): Promise<StoredHead | null>;
  /** One stored harness, its metadata repaired from the image when the two disagree; null when none is stored. */
  load(name: string): Promise<StoredHarness | null>;
  /** Removes what interrupted undeploys left (metadata without an image); answers their names. */
  sweep(): Promise<string[]>;
  /** The stored image bytes, as deployed; null when none is stored. */
  readImage(name: string): Promise<Buffer | null>;
  /**
   * Runs `work` holding `name`: no other transaction on `name`, in this process or any other sharing the
   * store, runs until it settles. What `work` saves or removes is committed when it returns and not at
   * all when it throws before its write; after a stop, `load` finds the harness as it was or as written.
   */
  transaction<T>(name: string, work: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  /**
   * `name`'s history, newest first, a page at a time (`query.cursor` from the previous page's
   * `next_cursor`); for a name no longer deployed too. An empty page when the name has none. Throws
   * `bad-request` for a cursor no store made.
   */
  history(name: string, query?: HistoryQuery): Promise<HistoryPage>;
  /** The images kept for `name` besides the one it serves, most recently served first; for an undeployed name, the one it served last first. */
  retained(name: string): Promise<RetainedImage[]>;
  /** A kept image's bytes, the served one's included; null when the store keeps no image of that digest under `name` (or its bytes no longer have that digest). */
  readRetained(name: string, digest: string): Promise<Buffer | null>;
  /** Names with history and no stored image, newest undeploy first: what a rollback can bring back. */
  undeployed(): Promise<UndeployedName[]>;
  /** Applies the retention policy to every name, those nobody writes any more included; answers the names forgotten whole. */
  prune(): Promise<string[]>;
  /** Merges uses into what is stored for `name`, the later time winning for each tool and event and for `last_used_at`; nothing when `name` is not stored. */
  saveUsage(name: string, used: UsageRecord, lastUsedAt: string | null): Promise<void>;
  /**
   * Follows what other processes sharing the store do; absent on a store one process keeps to itself.
   * Calls `watcher.resync` once watching has started (and after each reconnection). Answers the stop.
   */
  watch?(watcher: StoreWatcher): () => void;
  /** Where a store other processes share keeps the 2025-era MCP sessions, so any of them serves any session; absent, each process holds its own. */
  readonly sessions?: SessionRecords;
  /** The receipts of external writes (receipts.ts); absent, calls are served without them, as before. */
  readonly receipts?: ReceiptStore;
  /**
   * Whether the store answers, as far as the connections it already holds tell, without a statement of
   * its own: read by every readiness probe. Absent: a store that is always there (a directory).
   */
  reachable?(): boolean;
  /** Lets go of what the store holds open (connections); nothing is lost. */
  close(): Promise<void>;
}
