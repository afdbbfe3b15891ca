/**
 * How a harness's deploy history is written for people: `berm history`'s table, and the one line a
 * deploy or rollback prints for the entry it made. Every cell comes from the daemon's answer, which quotes
 * images (versions, break messages): it is made printable before anything is measured or painted.
 */
import type { GatedBreak, HistoryEntry, HistoryImage } from '@berm/client';
import { subjectOf } from './breaks/subject.js';
import { deployedByText, shortDigest } from './harness.js';
import type { Paint } from './paint.js';
import { printableDeep } from './printable.js';

/**
 * `2026-01-02T03:04:05Z`: an entry's time to the second, in UTC. History is read later and elsewhere
 * (an incident report, another replica's operator), where "5 minutes ago" has stopped being true.
 */
export function whenText(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `deploy`, `rollback (forced)`: what the change was, and whether it was forced. */
export function actionText(entry: HistoryEntry): string {
  return entry.forced ? `${entry.action} (forced)` : entry.action;
}

function versionOf(image: HistoryImage | null): string {
  if (image === null) return '-';
  return image.version ?? '?';
}

function digestOf(image: HistoryImage | null): string {
  return image === null ? '-' : shortDigest(image.digest);
}

/** `tool-removed (tool echo), field-removed (event alert)`; `-` when it was forced past nothing. */
export function forcedPastText(breaks: readonly GatedBreak[]): string {
  if (breaks.length === 0) return '-';
  return breaks.map((b) => `${b.code} (${subjectOf(b)})`).join(', ');
}

function countText(n: number): string {
  return `${n} break${n === 1 ? '' : 's'}`;
}

/**
 * The entry a deploy or rollback made, in one line: `history: deploy by alice via host/123 at
 * 2026-01-02T03:04:05Z, from 0.1.0 (0123456789ab); forced past 1 break`.
 */
export function entryLine(answered: HistoryEntry, paint: Paint): string {
  const entry = printableDeep(answered);
  let line = `${paint.dim('history:')} ${entry.action} by ${deployedByText(entry.principal)} via ${entry.replica} at ${whenText(entry.at)}`;
  if (entry.from !== null) line += `, from ${versionOf(entry.from)} (${digestOf(entry.from)})`;
  if (entry.source !== undefined) line += `; source ${entry.source.reference} (${shortDigest(entry.source.digest)})`;
  if (entry.forced_past.length > 0) line += `; ${paint.yellow(`forced past ${countText(entry.forced_past.length)}`)}`;
  else if (entry.forced) line += `; ${paint.yellow('forced')}`;
  return line;
}

const HEADER = ['WHEN', 'ACTION', 'BY', 'VIA', 'VERSION', 'DIGEST', 'FORCED PAST'];

/**
 * `berm history`'s table: one row per entry in the order given (bermd answers newest first), the version
 * and short digest before and after each change (`-` for none, `?` for a version bermd could not read),
 * and the breaks the change was forced past. `more`, when given, is said under it: how to see older entries.
 */
export function renderHistory(answered: readonly HistoryEntry[], paint: Paint, more?: string): string {
  const entries = printableDeep(answered);
  const rows = entries.map((e) => [
    whenText(e.at),
    actionText(e),
    deployedByText(e.principal),
    e.replica,
    `${versionOf(e.from)} → ${versionOf(e.to)}`,
    `${digestOf(e.from)} → ${digestOf(e.to)}`,
    forcedPastText(e.forced_past),
  ]);
  const widths = HEADER.map((title, i) => Math.max(title.length, ...rows.map((r) => r[i]!.length)));
  // Padding is measured on the plain text; paint goes on after, so escapes never count as width.
  const line = (cells: string[], style: (cell: string, i: number) => string): string =>
    cells.map((c, i) => style(i === cells.length - 1 ? c : c.padEnd(widths[i]!), i)).join('   ');
  const out = [paint.bold(line(HEADER, (c) => c))];
  rows.forEach((row, n) => {
    const forced = entries[n]!.forced;
    out.push(line(row, (c, i) => ((i === 1 && forced) || (i === 6 && c.trim() !== '-') ? paint.yellow(c) : c)));
  });
  if (more !== undefined) out.push(paint.dim(more));
  return out.join('\n');
}
