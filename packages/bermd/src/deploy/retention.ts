/**
 * What a store keeps of what each name served before, and for how long: the images a rollback can go back
 * to (`--keep-images`) and the age past which history entries, and an undeployed name whole, are
 * forgotten (`--history-retention`). Every store applies the same rules, written once here.
 */
import { DEFAULT_RECEIPT_RETENTION_MS } from './receipts.js';
import { numberDefault } from '../limits.js';
import type { HistoryEntry, RetainedImage } from './history.js';
import { decodeSource } from './history.js';
import { decodeBindings } from './store-codec.js';

export interface RetentionPolicy {
  /** Images kept besides the one served: 0 keeps none (an undeployed name still keeps the one it served last). */
  keepImages: number;
  /** How long entries, and an undeployed name, are kept. */
  historyRetentionMs: number;
  /** How long receipts of external writes are kept (`--receipt-retention`; receipts.ts). */
  receiptRetentionMs: number;
  /** The clock pruning reads; replaceable so tests move time rather than wait. */
  now: () => Date;
}

export const DEFAULT_KEEP_IMAGES = numberDefault('keep-images');
export const DEFAULT_HISTORY_RETENTION_MS = numberDefault('history-retention');

/** A whole policy from the parts given, the defaults for the rest. */
export function retentionPolicy(given: Partial<RetentionPolicy> = {}): RetentionPolicy {
  return {
    keepImages: given.keepImages ?? DEFAULT_KEEP_IMAGES,
    historyRetentionMs: given.historyRetentionMs ?? DEFAULT_HISTORY_RETENTION_MS,
    receiptRetentionMs: given.receiptRetentionMs ?? DEFAULT_RECEIPT_RETENTION_MS,
    now: given.now ?? (() => new Date()),
  };
}

/** Entries made before this time (ms) are past retention. */
export function retentionCutoff(policy: RetentionPolicy): number {
  return policy.now().getTime() - policy.historyRetentionMs;
}

/** How many retained images a name keeps: an undeployed one also the image it served last, which an undo needs. */
export function imagesKept(policy: RetentionPolicy, deployed: boolean): number {
  return deployed ? policy.keepImages : policy.keepImages + 1;
}

/** Whether an entry, oldest first in `entries` at `index`, is kept: the newest always, the others while within retention. */
export function entryKept(entry: HistoryEntry, isNewest: boolean, cutoffMs: number): boolean {
  return isNewest || Date.parse(entry.at) >= cutoffMs;
}

/** Whether a name with no image served, whose newest entry is `newest`, is forgotten whole. */
export function forgotten(newest: HistoryEntry | undefined, cutoffMs: number): boolean {
  return newest === undefined || Date.parse(newest.at) < cutoffMs;
}

/** A retained image's record as a store read it, or null when it is not one bermd wrote. */
export function decodeRetained(value: unknown): RetainedImage | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(v.digest)) return null;
  if (typeof v.retained_at !== 'string' || Number.isNaN(Date.parse(v.retained_at))) return null;
  const bindings = decodeBindings(v.bindings) ?? {};
  const source = decodeSource(v.source);
  return {
    digest: v.digest,
    version: typeof v.version === 'string' ? v.version : null,
    retained_at: v.retained_at,
    bindings,
    ...(source === undefined ? {} : { source }),
  };
}
