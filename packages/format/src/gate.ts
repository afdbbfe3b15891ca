import type { BreaksCallersError, GatedBreak } from '@berm/client';
import { describeDuration, SECOND_MS } from '@berm/protocol';
import { ago } from './harness.js';
import type { Paint } from './paint.js';
import { printableDeep } from './printable.js';
import { formatBreaksText } from './breaks/text.js';

/**
 * The views of the daemon's compatibility gate: the breaks a deploy was refused for or went
 * through with, grouped as `crab breaks` prints them, each group noting when callers last used
 * its tool or event.
 */

/** `30 days`, `12 hours`: the daemon's window, in the largest unit that divides it. */
export function windowText(seconds: number): string {
  return describeDuration(seconds * SECOND_MS);
}

/** What a group's heading says: when its tool or event was used last, and whether force went past it. */
function lastUse(items: readonly GatedBreak[], now: Date, forced: boolean): string {
  const first = items[0]!;
  const when = first.last_used_at === null ? 'never used' : `last used ${ago(first.last_used_at, now)}`;
  return forced && items.some((b) => b.used) ? `${when}; forced` : when;
}

function indented(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}

/** The breaks a deploy went through with; those it was forced past say so. */
export function renderReported(reported: readonly GatedBreak[], paint: Paint, now: Date = new Date()): string {
  // Codes and times come from the daemon's answer as they are: made printable with the rest.
  const breaks = printableDeep(reported);
  return [paint.yellow('reported:'), indented(formatBreaksText(breaks, paint, { note: (items) => lastUse(items, now, true) }))].join('\n');
}

/** The breaks a deploy was refused for, then the others it would only have reported. */
export function renderRefusal(refusal: BreaksCallersError, paint: Paint, now: Date = new Date()): string {
  const error = printableDeep(refusal);
  const note = (items: readonly GatedBreak[]): string => lastUse(items, now, false);
  const out = [
    paint.red(`refused: callers used these in the last ${windowText(error.window_seconds)}:`),
    indented(formatBreaksText(error.breaks, paint, { note })),
  ];
  if (error.reported.length > 0) out.push(paint.yellow('also reported:'), indented(formatBreaksText(error.reported, paint, { note })));
  return out.join('\n');
}

/** `2 breaks of tools or events callers used in the last 30 days`: why the gate refused, for the failure line. */
export function refusalReason(refusal: BreaksCallersError): string {
  const n = refusal.breaks.length;
  return `${n} break${n === 1 ? '' : 's'} of tools or events callers used in the last ${windowText(refusal.window_seconds)}`;
}

/** Whether a daemon error body is a `breaks-callers` refusal this view can show. */
export function isBreaksCallers(body: Record<string, unknown> | undefined): body is Record<string, unknown> & BreaksCallersError {
  return (
    body?.code === 'breaks-callers' && Array.isArray(body.breaks) && Array.isArray(body.reported) && typeof body.window_seconds === 'number'
  );
}
