/**
 * How a harness's receipts of external writes are written for people (`berm receipts`): one row per call,
 * newest first, saying when it started, which tool and who, its idempotency key, how it ended and on which
 * replica; with its recorded answer under it when asked. Keys, principals and answers come from callers
 * and guests: every cell is made printable before it is measured or painted.
 */
import type { ReceiptView } from '@berm/client';
import { whenText } from './history.js';
import type { Paint } from './paint.js';
import { printable, printableDeep } from './printable.js';

const HEADER = ['STARTED', 'TOOL', 'BY', 'KEY', 'OUTCOME', 'VIA'];

/** `ok`, `tool-error (guest-error)`, `failed (timeout)`, or `started` for a call still running or abandoned. */
export function outcomeText(receipt: ReceiptView): string {
  if (receipt.state === 'started' || receipt.outcome === null) return 'started';
  return receipt.code === null ? receipt.outcome : `${receipt.outcome} (${receipt.code})`;
}

/** The key as sent, or marked when bermd made it (the call sent none, so nothing can replay it). */
function keyText(receipt: ReceiptView): string {
  return receipt.generated ? `${receipt.key} (made by bermd)` : receipt.key;
}

function answerText(receipt: ReceiptView): string {
  if (!receipt.answer_kept) return 'not kept (over the result limit)';
  if (receipt.answer === undefined || receipt.answer === null) return '-';
  return JSON.stringify(receipt.answer);
}

/**
 * `berm receipts`' table. With `bodies`, each receipt's recorded answer (as JSON, on one line) is written
 * under its row. `empty` is said instead of a table when there are none.
 */
export function renderReceipts(answered: readonly ReceiptView[], paint: Paint, options: { bodies: boolean; empty: string }): string {
  if (answered.length === 0) return paint.dim(printable(options.empty));
  const receipts = printableDeep(answered);
  const rows = receipts.map((r) => [
    whenText(r.started_at),
    r.tool,
    r.principal === '' ? '-' : r.principal,
    keyText(r),
    outcomeText(r),
    r.replica,
  ]);
  const widths = HEADER.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  // Padding is measured on the plain text; paint goes on after, so escapes never count as width.
  const line = (cells: string[], style: (cell: string, i: number) => string): string =>
    cells.map((c, i) => style(i === cells.length - 1 ? c : c.padEnd(widths[i]!), i)).join('   ');
  const out = [paint.bold(line(HEADER, (c) => c))];
  rows.forEach((row, n) => {
    const receipt = receipts[n]!;
    const failed = receipt.state === 'started' || receipt.outcome !== 'ok';
    out.push(line(row, (c, i) => (i === 4 && failed ? paint.yellow(c) : c)));
    if (options.bodies) out.push(`  ${paint.dim('answer:')} ${answerText(receipt)}`);
  });
  return out.join('\n');
}
