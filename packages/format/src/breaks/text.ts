import type { Break } from '@berm/manifest';
import { plain, type Paint } from '../paint.js';
import { printable } from '../printable.js';
import { countBreaks, subjectOf } from './subject.js';

export interface TextOptions<B extends Break> {
  /** Said after a group's heading, e.g. when its tool was used last; nothing when it answers undefined. */
  note?: (items: readonly B[]) => string | undefined;
}

/** Breaks grouped under the tool or event they concern, one line each, then a summary line. */
export function formatBreaksText<B extends Break>(breaks: readonly B[], paint: Paint = plain, options: TextOptions<B> = {}): string {
  if (breaks.length === 0) return paint.green('No breaking changes.');
  const groups = new Map<string, B[]>();
  for (const item of breaks) {
    const subject = subjectOf(item);
    groups.set(subject, [...(groups.get(subject) ?? []), item]);
  }
  const width = Math.max(...breaks.map((b) => b.code.length));
  const lines: string[] = [];
  for (const [subject, items] of groups) {
    const note = options.note?.(items);
    lines.push(paint.bold(printable(subject)) + (note === undefined ? '' : `  ${paint.dim(`(${note})`)}`));
    for (const item of items) {
      const where = item.path ? `  ${paint.dim(printable(item.path))}` : '';
      lines.push(`  ${paint.red(item.code.padEnd(width))}  ${printable(oneLine(item.message))}${where}`);
    }
  }
  lines.push('', paint.bold(`${countBreaks(breaks.length)} in ${summarise([...groups.keys()])}`));
  return lines.join('\n');
}

/** `2 tools and 1 event`, from the group headings. */
function summarise(subjects: string[]): string {
  const counts = new Map<string, number>();
  for (const subject of subjects) {
    const kind = subject.split(' ')[0]!;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  const parts = [...counts].map(([kind, n]) => (kind === 'manifest' ? 'the manifest' : `${n} ${kind}${n === 1 ? '' : 's'}`));
  return parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}
