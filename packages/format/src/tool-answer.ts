/**
 * A tool call's answer as `crab run` and `berm call` print it for people: the result (or the tool's
 * error), then each event and log line its chain reported. Everything in it came from a guest, or from
 * a bermd answering for one, so every line is made printable before a style is put on it.
 */
import type { ToolAnswerDocument, ToolContent } from '@berm/protocol';
import type { Paint } from './paint.js';
import { printable } from './printable.js';

function contentText(item: ToolContent): string {
  if (item.type === 'text' && typeof item.text === 'string') return item.text;
  return `[${item.type} content]`;
}

function oneLine(value: unknown): string {
  return printable(JSON.stringify(value) ?? 'null');
}

export function renderToolAnswer(answer: ToolAnswerDocument, paint: Paint): string {
  const lines: string[] = [];
  if (answer.is_error) {
    const text = answer.content.map(contentText).join('\n');
    lines.push(`${paint.red('tool error:')} ${printable(text)}`);
  } else if (answer.result !== null) {
    lines.push(printable(JSON.stringify(answer.result, null, 2)));
  } else {
    for (const item of answer.content) lines.push(printable(contentText(item)));
  }
  for (const e of answer.events) {
    lines.push(
      `${paint.cyan('event')} ${printable(`${e.harness}/${e.event}`)} ${paint.dim(printable(`(${e.tool})`))} ${oneLine(e.fields)}`,
    );
  }
  for (const l of answer.logs) {
    lines.push(`${paint.dim('log')} ${printable(l.level)} ${paint.dim(printable(`${l.harness}/${l.tool}:`))} ${printable(l.message)}`);
  }
  if (answer.idempotency_key !== undefined) {
    const key = `idempotency key ${printable(answer.idempotency_key)}`;
    lines.push(paint.dim(answer.replayed === true ? `${key}: replayed, the recorded answer (the tool did not run again)` : key));
  }
  return lines.join('\n');
}
