/**
 * Harness metadata as stores write it (JSON), and read back keeping only well-formed members: what is
 * read is data on disk or in a database, which a person may have edited.
 *
 * Use times are the one decoder every store reads them through (`decodeUseTime`): the registry and the
 * gate compare them as text (`laterUse`), which orders them in time only when every one has
 * `Date.toISOString()`'s form, and a time far ahead would protect its tool from every breaking deploy.
 */
import { type Bindings, HARNESS_SETTINGS, MINUTE_MS } from '@berm/protocol';
import { emptyUsage, type UsageRecord } from './gate.js';
import { decodeEntry, decodeSource } from './history.js';
import type { HarnessMeta } from './store.js';

/**
 * How far past this machine's clock a use read from a store may lie: the clocks of replicas sharing a
 * store differ a little, and NTP keeps them well within this. A later time is no use of anything (a
 * clock far off, or a forged time) and is dropped.
 */
export const USE_CLOCK_SKEW_MS = 5 * MINUTE_MS;

/** `Date.toISOString()`'s form for years 0000 to 9999, with or without the milliseconds. */
const USE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z$/;

/**
 * A use's time as bermd keeps it, `Date.toISOString()`'s form (`2026-12-01T10:00:00.000Z`), from what a
 * store holds: that text, the same without milliseconds (`2026-12-01T10:00:00Z`, which a person editing a
 * file may write), or a `Date` (a `timestamptz` column). Null for anything else: another form or offset,
 * a time that does not exist (`2026-02-30`, which `Date.parse` would roll over), or one later than `now`
 * plus USE_CLOCK_SKEW_MS.
 */
export function decodeUseTime(value: unknown, now: number = Date.now()): string | null {
  let ms: number;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'string' && USE_TIME.test(value)) ms = Date.parse(value);
  else return null;
  if (!Number.isFinite(ms) || ms > now + USE_CLOCK_SKEW_MS) return null;
  const iso = new Date(ms).toISOString();
  if (typeof value === 'string') return iso === value || iso === `${value.slice(0, -1)}.000Z` ? iso : null;
  // A Date outside years 0000 to 9999 prints with a sign and six digits, which would not compare as text.
  return USE_TIME.test(iso) ? iso : null;
}

/** Stored uses (`{"tools": {NAME: TIME}, "events": {NAME: TIME}}`), keeping only the times `decodeUseTime` accepts. */
export function decodeUsage(value: unknown, now: number = Date.now()): UsageRecord {
  const used = emptyUsage();
  if (typeof value !== 'object' || value === null) return used;
  const { tools, events } = value as { tools?: unknown; events?: unknown };
  for (const [into, from] of [
    [used.tools, tools],
    [used.events, events],
  ] as const) {
    if (typeof from !== 'object' || from === null || Array.isArray(from)) continue;
    for (const [item, at] of Object.entries(from)) {
      const time = decodeUseTime(at, now);
      if (time !== null) into[item] = time;
    }
  }
  return used;
}

/** The longest deployer's name a store's record may give: a principal's name is far shorter; a longer one was not written by bermd. */
const MAX_DEPLOYED_BY = 256;

/**
 * Who deployed, as a store's record gives it: a name bermd could have written (a string of 1 to
 * MAX_DEPLOYED_BY characters, none a control character), else undefined, which reads as unknown. A record
 * written before bermd recorded it has none (a missing member, a NULL column).
 */
export function decodeDeployedBy(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_DEPLOYED_BY) return undefined;
  return /[\u0000-\u001f\u007f-\u009f]/.test(value) ? undefined : value;
}

export function encodeMeta(meta: HarnessMeta): string {
  return JSON.stringify(meta);
}

/** The metadata in `text`, or null when it is not metadata; its use times as `decodeUseTime` reads them against `now`. */
export function decodeMeta(text: string, now: number = Date.now()): HarnessMeta | null {
  let value: Partial<HarnessMeta>;
  try {
    value = JSON.parse(text) as Partial<HarnessMeta>;
  } catch {
    return null;
  }
  if (typeof value?.digest !== 'string' || typeof value.deployed_at !== 'string' || typeof value.name !== 'string') return null;
  const meta: HarnessMeta = {
    name: value.name,
    digest: value.digest,
    deployed_at: value.deployed_at,
    last_used_at: decodeUseTime(value.last_used_at, now),
    used: decodeUsage(value.used, now),
  };
  const by = decodeDeployedBy(value.deployed_by);
  if (by !== undefined) meta.deployed_by = by;
  const source = decodeSource(value.source);
  if (source !== undefined) meta.source = source;
  if (typeof value.bindings === 'object' && value.bindings !== null) {
    const bindings: Record<string, Bindings> = {};
    for (const [digest, b] of Object.entries(value.bindings)) {
      const read = decodeBindings(b);
      if (read !== undefined) bindings[digest] = read;
    }
    meta.bindings = bindings;
  }
  const pending = value.pending as { id?: unknown; entry?: unknown } | undefined;
  if (typeof pending === 'object' && pending !== null && typeof pending.id === 'string') {
    const entry = decodeEntry(pending.entry);
    if (entry !== null) meta.pending = { id: pending.id, entry };
  }
  return meta;
}

/** Stored bindings, keeping only well-formed members. */
export function decodeBindings(value: unknown): Bindings | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const out: Bindings = {};
  for (const row of HARNESS_SETTINGS) {
    // Bindings stored before a limit's key was its wire name are read under the key they had.
    const n = v[row.harness.wire] ?? ('legacy' in row.harness ? v[row.harness.legacy] : undefined);
    if (typeof n === 'number' && Number.isSafeInteger(n) && n > 0) out[row.harness.wire] = n;
  }
  const g = v.grants as Record<string, unknown> | undefined;
  if (typeof g === 'object' && g !== null) {
    const syscalls: Record<string, string[]> = {};
    if (typeof g.syscalls === 'object' && g.syscalls !== null) {
      for (const [name, hosts] of Object.entries(g.syscalls as Record<string, unknown>)) {
        if (Array.isArray(hosts)) syscalls[name] = hosts.filter((h): h is string => typeof h === 'string');
      }
    }
    const secrets = Array.isArray(g.secrets) ? g.secrets.filter((s): s is string => typeof s === 'string') : [];
    out.grants = { syscalls, secrets };
  }
  return out;
}

/** The bindings entry of the image `meta` describes, alone. */
export function onlyCurrent(meta: HarnessMeta): Record<string, Bindings> {
  const own = meta.bindings?.[meta.digest];
  return own === undefined ? {} : { [meta.digest]: own };
}
