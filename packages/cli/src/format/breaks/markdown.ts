import type { Break } from '@berm/manifest';
import { countBreaks, subjectOf } from './subject.js';

/** A summary line and a table, for a pull-request comment. */
export function formatBreaksMarkdown(breaks: readonly Break[]): string {
  if (breaks.length === 0) return '**No breaking changes.**';
  const rows = breaks.map((item) => {
    const [kind, ...name] = subjectOf(item).split(' ');
    const subject = name.length ? `${kind} ${code(name.join(' '))}` : kind!;
    return `| ${subject} | ${code(item.code)} | ${item.path ? code(item.path) : ''} | ${text(item.message)} |`;
  });
  return [`**${countBreaks(breaks.length)}**`, '', '| Concerns | Break | Where | What |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** Table-cell text: a `|` would end the cell and a newline the row; `<` and `&` would start markup. */
function text(value: string): string {
  return cell(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
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
