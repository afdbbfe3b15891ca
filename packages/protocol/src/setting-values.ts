/**
 * A setting's text read by its row: the one check of a value, the same on the daemon's command line,
 * in the deploy query and in `crab deploy`'s flags, so a value is refused with the same words wherever
 * it is given.
 */
import type { Setting } from './settings.js';
import { formatDuration, formatSize, MIN_MEMORY_BYTES, parseDuration, readCountLimit, readDurationLimit, readSizeLimit } from './units.js';

/** A setting's value as read: a number (ms, bytes, a count), a flag, a text, or texts. */
export type SettingValue = number | boolean | string | string[];

function whole(name: string, text: string): number | string {
  const written = text.trim();
  if (!/^\d+$/.test(written) || !Number.isSafeInteger(Number(written))) return `${name} ${text}: expected a whole number`;
  return Number(written);
}

function bool(name: string, text: string): boolean | string {
  const written = text.trim();
  if (written === 'true') return true;
  if (written === 'false') return false;
  return `${name} ${text}: expected true or false`;
}

function print(row: Setting, value: number): string {
  return row.kind === 'size' ? formatSize(value) : row.kind === 'duration' ? formatDuration(value) : String(value);
}

/** Why a bound exists, where the number alone does not say. */
function boundNote(row: Setting, value: number): string {
  return row.kind === 'size' && value === MIN_MEMORY_BYTES ? ' (one wasm page)' : '';
}

/**
 * The value of one text given for `row` (a number, boolean or text; a list's item is read as text), or
 * what is wrong with it, worded `${name} ${text}: ...` where `name` is how the caller was given it
 * (`--max-memory`, `max_memory`).
 */
export function readSettingText(row: Setting, name: string, text: string): number | boolean | string | { refused: string } {
  let value: number | boolean | string;
  switch (row.kind) {
    case 'size':
      value = readSizeLimit(name, text);
      break;
    case 'duration':
      value = row.zeroMeansNone === true && parseDuration(text) === 0 ? 0 : readDurationLimit(name, text, row.examples);
      break;
    case 'count':
      value = readCountLimit(name, text);
      break;
    case 'whole':
      value = whole(name, text);
      break;
    case 'boolean':
    case 'switch':
      value = bool(name, text);
      break;
    default:
      return text;
  }
  if (typeof value === 'string') return { refused: value };
  if (typeof value === 'number') {
    if (row.min !== undefined && value < row.min)
      return { refused: `${name} ${text}: must be at least ${print(row, row.min)}${boundNote(row, row.min)}` };
    if (row.max !== undefined && value > row.max) return { refused: `${name} ${text}: must be at most ${print(row, row.max)}` };
  }
  return value;
}

/** The default of a row as help prints it: `10s`, `64M`, `4`, `info`; undefined for none or one bermd computes. */
export function printDefault(row: Setting): string | undefined {
  const value = row.default;
  if (value === undefined || typeof value === 'object') return undefined;
  if (typeof value === 'number') return print(row, value);
  return String(value);
}
