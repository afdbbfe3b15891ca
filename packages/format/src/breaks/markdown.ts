import type { Break } from '@berm/manifest';
import { printableDeep } from '../printable.js';
import { countBreaks, subjectOf } from './subject.js';

/** A summary line and a table, for a pull-request comment (and often a terminal first: control characters are made printable). */
export function formatBreaksMarkdown(breaks: readonly Break[]): string {
  if (breaks.length === 0) return '**No breaking changes.**';
  const rows = printableDeep(breaks).map((item) => {
    const [kind, ...name] = subjectOf(item).split(' ');
    const subject = name.length ? `${kind} ${code(name.join(' '))}` : kind!;
    return `| ${subject} | ${code(item.code)} | ${item.path ? code(item.path) : ''} | ${text(item.message)} |`;
  });
  return [`**${countBreaks(breaks.length)}**`, '', '| Concerns | Break | Where | What |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/**
 * Table-cell text: a `|` would end the cell and a newline the row; `<` and `&` would start markup.
 * Messages name things in code spans, where entities are not decoded and would print as typed, so
 * those spans are kept as they are (pipes aside: a GFM table ends a cell on them even there).
 */
function text(value: string): string {
  let out = '';
  let at = 0;
  for (const span of codeSpans(value)) {
    out += escapeMarkup(value.slice(at, span.start)) + value.slice(span.start, span.end);
    at = span.end;
  }
  return cell(out + escapeMarkup(value.slice(at)));
}

function escapeMarkup(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The code spans of `value` (CommonMark: a run of backticks closed by a run of the same length). */
function codeSpans(value: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  const runs = [...value.matchAll(/`+/g)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  for (let i = 0; i < runs.length; i++) {
    const open = runs[i]!;
    const close = runs.findIndex((r, j) => j > i && r.end - r.start === open.end - open.start);
    if (close < 0) continue;
    spans.push({ start: open.start, end: runs[close]!.end });
    i = close;
  }
  return spans;
}

/** A code span that survives any backticks inside it (CommonMark: a longer fence, padded). */
function code(value: string): string {
  const runs = value.match(/`+/g) ?? [];
  const fence = '`'.repeat(Math.max(0, ...runs.map((r) => r.length)) + 1);
  const pad = runs.length ? ' ' : '';
  return `${fence}${pad}${cell(value)}${pad}${fence}`;
}

function cell(value: string): string {
  return value.replace(/\|/g, '\\|').replace(/\s*[\r\n]+\s*/g, ' ');
}
