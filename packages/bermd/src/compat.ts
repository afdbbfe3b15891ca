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
import { BermdError } from './errors.js';
import type { UsageRecord } from './store.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** How far back a use still protects a tool or event: 30 days, as the design notes set it. */
export const DEFAULT_BREAKS_WINDOW_MS = 30 * DAY;

/** A break as the deploy answers it: with when its tool or event was used last. */
export interface GatedBreak extends Break {
  /** The last use of the tool or event the break concerns (ISO 8601), null if never. */
  last_used_at: string | null;
  /** Whether that use is within the window: such a break refuses the deploy unless it is forced. */
  used: boolean;
}

export interface GateResult {
  /** Every break, in the order the manifest library lists them. */
  all: GatedBreak[];
  /** Breaks of tools and events used within the window. */
  refusing: GatedBreak[];
  /** The others. */
  passing: GatedBreak[];
}

/** When each tool and event of a harness was used last, for the tools and events its manifest has. */
export interface HarnessUsage {
  tools: Record<string, string | null>;
  events: Record<string, string | null>;
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
export function breaksCallersError(name: string, gate: GateResult, windowMs: number): BermdError {
  const subjects = [...new Set(gate.refusing.map(subjectOf))];
  const n = gate.refusing.length;
  const message =
    `the image would break callers of ${name}: ${n} break${n === 1 ? '' : 's'} in ${listed(subjects)}, ` +
    `used in the last ${describeWindow(windowMs)}; deploy with force=true to replace it anyway`;
  return new BermdError('breaks-callers', message, {
    name,
    window_seconds: Math.round(windowMs / SECOND),
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

const UNITS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: DAY, w: 7 * DAY };

/**
 * `30d`, `12h`, `90m`, `45s`, `2w`, or a bare number of seconds; `0` turns the gate off. Answers
 * milliseconds, or undefined when the text is none of these.
 */
export function parseWindow(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?$/.exec(text.trim());
  if (m === null) return undefined;
  const ms = Math.round(Number(m[1]) * UNITS[m[2] ?? 's']!);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** `30 days`, `12 hours`, `90 seconds`: the largest unit that divides the window evenly. */
export function describeWindow(ms: number): string {
  for (const [unit, size] of [['day', DAY], ['hour', HOUR], ['minute', MINUTE], ['second', SECOND]] as const) {
    if (ms >= size && ms % size === 0) {
      const n = ms / size;
      return `${n} ${unit}${n === 1 ? '' : 's'}`;
    }
  }
  return `${ms} ms`;
}
