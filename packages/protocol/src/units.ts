/**
 * The one grammar of sizes and durations, for the daemon's flags, the deploy query and what the CLI
 * and the daemon print.
 *
 * Durations: a number (decimals allowed) and a unit, `ms`, `s`, `m`, `h`, `d` or `w`; a bare number is
 * seconds; space may come between the two. `500ms`, `1.5s`, `2m`, `12h`, `30d`, `2w`, `3600`.
 * Sizes: a whole number of bytes, or with `K`, `M` or `G` (powers of 1024), in either case and
 * optionally followed by `i` and `B`: `1048576`, `512K`, `64M`, `64MiB`, `1gb`.
 *
 * Counts: a whole number, `4`.
 *
 * Parsing answers undefined for text outside the grammar, and the value otherwise, which the caller
 * bounds (a time limit is at least 1 ms, the breaks window may be 0) with its own message.
 */

export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
export const WEEK_MS = 7 * DAY_MS;

/** Milliseconds in each duration unit. */
export const DURATION_UNITS = { ms: 1, s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS, w: WEEK_MS } as const;

export type DurationUnit = keyof typeof DURATION_UNITS;

/** Bytes in each size unit. */
export const SIZE_UNITS = { K: 1024, M: 1024 ** 2, G: 1024 ** 3 } as const;

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?$/;
const SIZE = /^(\d+)\s*([KMG]i?B?)?$/i;

/** Milliseconds (rounded) of a duration in the grammar above, or undefined when `text` is not one. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (m === null) return undefined;
  return Math.round(Number(m[1]) * DURATION_UNITS[(m[2] ?? 's') as DurationUnit]);
}

/** Bytes of a size in the grammar above, or undefined when `text` is not one. */
export function parseSize(text: string): number | undefined {
  const m = SIZE.exec(text.trim());
  if (m === null) return undefined;
  const unit = (m[2] ?? '').charAt(0).toUpperCase();
  return Number(m[1]) * (unit === '' ? 1 : SIZE_UNITS[unit as keyof typeof SIZE_UNITS]);
}

/** The largest unit of `units` that divides `value` evenly (at least once), or undefined. */
function evenUnit<U extends string>(value: number, units: ReadonlyArray<readonly [U, number]>): readonly [U, number] | undefined {
  return units.find(([, size]) => value >= size && value % size === 0);
}

const COMPACT_DURATIONS = (['w', 'd', 'h', 'm', 's'] as const).map((u) => [u, DURATION_UNITS[u]] as const);

/** `500ms`, `10s`, `2m`, `12h`: in the grammar, with the largest unit that divides the time evenly. */
export function formatDuration(ms: number): string {
  const unit = evenUnit(ms, COMPACT_DURATIONS);
  return unit === undefined ? `${ms}ms` : `${ms / unit[1]}${unit[0]}`;
}

const WORDED_DURATIONS = [
  ['day', DAY_MS],
  ['hour', HOUR_MS],
  ['minute', MINUTE_MS],
  ['second', SECOND_MS],
] as const;

/** `30 days`, `12 hours`, `1 second`, `1500 ms`: for sentences, with the largest unit that divides the time evenly. */
export function describeDuration(ms: number): string {
  const unit = evenUnit(ms, WORDED_DURATIONS);
  if (unit === undefined) return `${ms} ms`;
  const n = ms / unit[1];
  return `${n} ${unit[0]}${n === 1 ? '' : 's'}`;
}

const COMPACT_SIZES = (['G', 'M', 'K'] as const).map((u) => [u, SIZE_UNITS[u]] as const);

/** `64M`, `512K`, `1000`: in the grammar, with the largest unit that divides the size evenly. */
export function formatSize(bytes: number): string {
  const unit = evenUnit(bytes, COMPACT_SIZES);
  return unit === undefined ? String(bytes) : `${bytes / unit[1]}${unit[0]}`;
}

/** The smallest memory cap: one wasm page. */
export const MIN_MEMORY_BYTES = 65536;

/** A time limit (at least 1 ms) in milliseconds, or what is wrong with `text`, after `${name} ${text}: `. */
export function readDurationLimit(name: string, text: string, examples = '500ms, 10s or 2m'): number | string {
  const ms = parseDuration(text);
  if (ms === undefined) return `${name} ${text}: expected a duration such as ${examples}`;
  if (ms < 1 || !Number.isSafeInteger(ms)) return `${name} ${text}: must be at least 1ms`;
  return ms;
}

/** A size limit (at least 1 byte) in bytes, or what is wrong with `text`, after `${name} ${text}: `. */
export function readSizeLimit(name: string, text: string): number | string {
  const bytes = parseSize(text);
  if (bytes === undefined) return `${name} ${text}: expected a byte count such as 1048576, 512K or 64M`;
  if (bytes < 1 || !Number.isSafeInteger(bytes)) return `${name} ${text}: must be at least 1 byte`;
  return bytes;
}

/** A count limit (a whole number, at least 1), or what is wrong with `text`, after `${name} ${text}: `. */
export function readCountLimit(name: string, text: string): number | string {
  const written = text.trim();
  if (!/^\d+$/.test(written)) return `${name} ${text}: expected a whole number such as 4`;
  const n = Number(written);
  if (n < 1 || !Number.isSafeInteger(n)) return `${name} ${text}: must be at least 1`;
  return n;
}
