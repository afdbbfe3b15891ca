/**
 * The compatibility gate of a redeploy (spec §3, §5): the breaks between the stored harness's
 * manifest and the new one, split by whether a caller used the tool or event they touch within
 * the window. Those are what refuses a deploy (409 `breaks-callers`) unless it is forced; the
 * rest are reported and the deploy goes through.
 *
 * Usage is by name and kept per tool and event (see `Registry.recordUse`), so "used" means a
 * caller reached that tool or emitted that event through this harness name, whichever image
 * answered it then.
 */
import { breaks, type Break, type Manifest } from '@berm/manifest';
import { describeDuration, parseDuration, SECOND_MS, type GatedBreak, type HarnessUsage } from '@berm/protocol';
import { BermdError } from '../errors.js';
import { numberDefault } from '../limits.js';

export type { GatedBreak, HarnessUsage };

/** How far back a use still protects a tool or event: 30 days, as the design notes set it. */
export const DEFAULT_BREAKS_WINDOW_MS = numberDefault('breaks-window');

/**
 * When each tool ran and each event was emitted last, by name, in `Date.toISOString()`'s form: what
 * `Registry.recordUse` makes, and what every store's reading gives (store-codec.ts, `decodeUseTime`).
 */
export interface UsageRecord {
  tools: Record<string, string>;
  events: Record<string, string>;
}

export function emptyUsage(): UsageRecord {
  return { tools: {}, events: {} };
}

/**
 * The later of two uses; null when neither happened. Compared as text, which orders them in time because
 * both have `Date.toISOString()`'s form (years 0000 to 9999, milliseconds, `Z`): a time from outside
 * reaches a `UsageRecord` only through `decodeUseTime`, which gives that form or nothing.
 */
export function laterUse(a: string | null | undefined, b: string | null | undefined): string | null {
  if (a === null || a === undefined) return b ?? null;
  if (b === null || b === undefined) return a;
  return b > a ? b : a;
}

/** Writes `from`'s uses into `into`, a use only ever moving later: calls finish out of order, and processes sharing a store each saw some. */
export function mergeUsage(into: UsageRecord, from: UsageRecord): UsageRecord {
  for (const [tool, at] of Object.entries(from.tools)) into.tools[tool] = laterUse(into.tools[tool], at)!;
  for (const [event, at] of Object.entries(from.events)) into.events[event] = laterUse(into.events[event], at)!;
  return into;
}

export interface GateResult {
  /** Every break, in the order the manifest library lists them. */
  all: GatedBreak[];
  /** Breaks of tools and events used within the window. */
  refusing: GatedBreak[];
  /** The others. */
  passing: GatedBreak[];
}

/**
 * `true` when a use at `lastUsed` is less than `windowMs` before `now`. A use stamped after `now`
 * (the clock went back) counts as recent: the gate errs on the side of the callers. A window of 0
 * turns the gate off.
 */
export function usedWithin(lastUsed: string | null, now: Date, windowMs: number): boolean {
  if (lastUsed === null || windowMs <= 0) return false;
  const at = Date.parse(lastUsed);
  if (Number.isNaN(at)) return false;
  return now.getTime() - at < windowMs;
}

/** The last use of what `item` concerns. */
function lastUseOf(item: Break, usage: UsageRecord): string | null {
  if (item.tool !== undefined) return usage.tools[item.tool] ?? null;
  if (item.event !== undefined) return usage.events[item.event] ?? null;
  return null;
}

/** Compares the stored manifest with the next one and splits the breaks by recent use. */
export function gateBreaks(old: Manifest, next: Manifest, usage: UsageRecord, now: Date, windowMs: number): GateResult {
  const all = breaks(old.data, next.data).map((item): GatedBreak => {
    const lastUsedAt = lastUseOf(item, usage);
    return { ...item, last_used_at: lastUsedAt, used: usedWithin(lastUsedAt, now, windowMs) };
  });
  return { all, refusing: all.filter((b) => b.used), passing: all.filter((b) => !b.used) };
}

/** The 409 a deploy gets when it breaks recent callers and is not forced. */
export function breaksCallersError(name: string, gate: GateResult, windowMs: number, action: 'deploy' | 'rollback' = 'deploy'): BermdError {
  const subjects = [...new Set(gate.refusing.map(subjectOf))];
  const n = gate.refusing.length;
  const breaks = `${n} break${n === 1 ? '' : 's'} in ${listed(subjects)}, used in the last ${describeWindow(windowMs)}`;
  // Going back removes what the newer image added, which callers may have started to use since.
  const message =
    action === 'rollback'
      ? `rolling ${name} back would break its callers of what the image it serves added: ${breaks}; roll back with force=true to go back anyway`
      : `the image would break callers of ${name}: ${breaks}; deploy with force=true to replace it anyway`;
  return new BermdError('breaks-callers', message, {
    name,
    window_seconds: Math.round(windowMs / SECOND_MS),
    breaks: gate.refusing,
    reported: gate.passing,
  });
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function subjectOf(item: Break): string {
  if (item.tool !== undefined) return `tool ${item.tool}`;
  if (item.event !== undefined) return `event ${item.event}`;
  if (item.prompt !== undefined) return `prompt ${item.prompt}`;
  if (item.resource !== undefined) return `resource ${item.resource}`;
  return 'the manifest';
}

/** Per tool and event of `manifest`, its last use from `used` (null when never). */
export function usageOf(manifest: Manifest, used: UsageRecord): HarnessUsage {
  const tools: Record<string, string | null> = {};
  const events: Record<string, string | null> = {};
  for (const tool of manifest.data.tools) tools[tool.name] = used.tools[tool.name] ?? null;
  for (const event of manifest.data.events) events[event.name] = used.events[event.name] ?? null;
  return { tools, events };
}

/**
 * `30d`, `12h`, `90m`, `45s`, `2w`, or a bare number of seconds (the duration grammar of
 * `@berm/protocol`); `0` turns the gate off. Answers milliseconds, or undefined when the text is none of these.
 */
export function parseWindow(text: string): number | undefined {
  const ms = parseDuration(text);
  return ms !== undefined && Number.isSafeInteger(ms) ? ms : undefined;
}

/** `30 days`, `12 hours`, `90 seconds`: the largest unit that divides the window evenly. */
export const describeWindow = describeDuration;
