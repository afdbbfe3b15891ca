/**
 * A harness's deploy history, as every store keeps it: one entry per deploy, forced deploy, undeploy and
 * rollback that was answered, appended by the store as part of that change's own transaction (or atomic
 * step), so an entry exists exactly when its change does. The registry supplies each entry whole; a
 * store adds nothing to it but its place in the order.
 *
 * Reading is newest first, a page at a time, with an opaque cursor: a store encodes its own position in
 * it (a row's id, an entry's sequence number), which no caller reads. What is read back is data a person
 * may have edited, so it is decoded here, keeping only well-formed entries.
 */
import type { DeploySource, GatedBreak, HistoryAction, HistoryEntry, HistoryImage, Notice } from '@berm/protocol';
import { BermdError } from '../errors.js';

export type { HistoryAction, HistoryEntry, HistoryImage, HistoryPage, RetainedImage } from '@berm/protocol';

/** A name with history and no stored image, as a store finds it (see `HarnessStore.undeployed`). */
export interface UndeployedName {
  name: string;
  /** The newest entry: the undeploy. */
  entry: HistoryEntry;
}

export interface HistoryQuery {
  /** A `next_cursor` a previous page gave; absent for the newest page. */
  cursor?: string;
  /** The most entries a page holds; HISTORY_PAGE by default, at most MAX_HISTORY_PAGE. */
  limit?: number;
}

export const HISTORY_PAGE = 50;
export const MAX_HISTORY_PAGE = 500;

/**
 * The most entries a store keeps per name: the oldest go first. A harness deployed every few minutes for
 * months stays bounded; an operator who needs more keeps the log.
 */
export const MAX_HISTORY_ENTRIES = 1000;

/** A page's size from `query.limit`, within 1 and MAX_HISTORY_PAGE. */
export function pageSize(query: HistoryQuery): number {
  const n = query.limit ?? HISTORY_PAGE;
  if (!Number.isSafeInteger(n) || n < 1) return HISTORY_PAGE;
  return Math.min(n, MAX_HISTORY_PAGE);
}

/** A store's position (a positive integer) as an opaque cursor. */
export function encodeCursor(position: number): string {
  return Buffer.from(`h${position}`).toString('base64url');
}

/** The position in `cursor`; undefined when it is not one `encodeCursor` made (the caller then answers `invalid-cursor`). */
export function decodeCursor(cursor: string): number | undefined {
  const text = Buffer.from(cursor, 'base64url').toString();
  const m = /^h([1-9]\d{0,15})$/.exec(text);
  return m === null ? undefined : Number(m[1]);
}

/** The position `query.cursor` names, undefined for the newest page; a cursor no store made is `bad-request`. */
export function cursorPosition(name: string, query: HistoryQuery): number | undefined {
  if (query.cursor === undefined) return undefined;
  const position = decodeCursor(query.cursor);
  if (position === undefined)
    throw new BermdError('bad-request', `the cursor for ${name}'s history is not one bermd gave: start again without it`, { name });
  return position;
}

const ACTIONS: readonly string[] = ['deploy', 'undeploy', 'rollback'];

/** An entry as a store read it, or null when it is not one bermd wrote. */
export function decodeEntry(value: unknown): HistoryEntry | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.action !== 'string' || !ACTIONS.includes(v.action)) return null;
  if (typeof v.at !== 'string' || Number.isNaN(Date.parse(v.at)) || typeof v.replica !== 'string') return null;
  const from = decodeImage(v.from);
  const to = decodeImage(v.to);
  if (from === undefined || to === undefined) return null;
  const source = decodeSource(v.source);
  return {
    action: v.action as HistoryAction,
    at: v.at,
    principal: typeof v.principal === 'string' ? v.principal : null,
    replica: v.replica,
    from,
    to,
    forced: v.forced === true,
    forced_past: listOf(v.forced_past) as GatedBreak[],
    reported: listOf(v.reported) as GatedBreak[],
    notices: listOf(v.notices) as Notice[],
    ...(source === undefined ? {} : { source }),
  };
}

/**
 * A deploy's source as a store's record gives it: an `oci://` reference of printable characters (as the
 * deploy query admits one) and a sha256 digest, else undefined, which reads as no source.
 */
export function decodeSource(value: unknown): DeploySource | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { reference, digest } = value as { reference?: unknown; digest?: unknown };
  if (typeof reference !== 'string' || typeof digest !== 'string') return undefined;
  if (!reference.startsWith('oci://') || reference.length > 1024 || /[\u0000-\u0020\u007f-\u009f]/.test(reference)) return undefined;
  return /^sha256:[0-9a-f]{64}$/.test(digest) ? { reference, digest } : undefined;
}

function decodeImage(value: unknown): HistoryImage | null | undefined {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object') return undefined;
  const { digest, version } = value as Record<string, unknown>;
  if (typeof digest !== 'string') return undefined;
  return { digest, version: typeof version === 'string' ? version : null };
}

function listOf(value: unknown): object[] {
  return Array.isArray(value) ? value.filter((x): x is object => typeof x === 'object' && x !== null) : [];
}
