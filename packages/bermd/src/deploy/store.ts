/**
 * Where the deployed set is kept, behind one interface: the registry holds the set in memory and writes
 * through a `HarnessStore`. `DirectoryStore` (directory-store.ts) keeps it in files under the state
 * directory; another kind of store sits beside it and implements the same promises:
 *
 * - a deploy is atomic: after a stop at any point, `load` gives the old harness or the new one, never a
 *   torn one, and an image comes back with its own bindings (never another image's, never the defaults
 *   in their place);
 * - the image is the source of truth: metadata that names another digest is derived again from it
 *   (`repaired`), keeping the usage, which belongs to the name, and the bindings recorded for that digest;
 * - an undeploy that returned has removed the harness for good.
 *
 * The metadata's form on the wire of a store (JSON) is store-codec.ts, shared by every kind of store.
 */
import type { Bindings } from '@berm/protocol';
import type { UsageRecord } from './gate.js';

export interface HarnessMeta {
  name: string;
  digest: string;
  deployed_at: string;
  last_used_at: string | null;
  /** Usage belongs to the name, not the image: it carries over a replace and a metadata repair. */
  used: UsageRecord;
  /** The operator's bindings by image digest; absent, or no entry for a digest, means the defaults. */
  bindings?: Record<string, Bindings>;
}

export interface StoredHarness {
  name: string;
  bytes: Buffer;
  digest: string;
  meta: HarnessMeta;
  /** True when the metadata was missing, unreadable or for another image, and was derived again. */
  repaired: boolean;
}

export interface HarnessStore {
  /** Names with a stored image, sorted. */
  names(): Promise<string[]>;
  /** One stored harness, its metadata repaired from the image when the two disagree; null when none is stored. */
  load(name: string): Promise<StoredHarness | null>;
  /** Removes what interrupted undeploys left (metadata without an image); answers their names. */
  sweep(): Promise<string[]>;
  /** The stored image bytes, as deployed; null when none is stored. */
  readImage(name: string): Promise<Buffer | null>;
  /** Stores an image and its metadata, atomically; `meta.bindings` holds the new image's bindings, if any. */
  save(name: string, bytes: Uint8Array, meta: HarnessMeta): Promise<void>;
  /** Replaces the metadata of the stored image (usage). */
  saveMeta(meta: HarnessMeta): Promise<void>;
  /** Removes a harness; false when nothing was stored. */
  remove(name: string): Promise<boolean>;
}
