import { typesText } from './json.js';
import type { SchemaGraph, SchemaNode } from './nodes.js';
import { branchLabel } from './variants.js';

const MAX_VALUE_CHARS = 60;
const MAX_LISTED = 8;

/** Messages are one line whatever names and values the schemas hold. */
export function oneLine(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]+/g, ' ');
}

export function valueText(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

export function valuesText(values: readonly unknown[]): string {
  if (values.length === 0) return 'nothing';
  const shown = values.slice(0, MAX_LISTED).map(valueText).join(', ');
  return values.length > MAX_LISTED ? `${shown}, … (${values.length} in all)` : shown;
}

/** A schema named by what it allows: `string|null`, `Circle|Square`, `one of "a", "b"`. */
export function nodeText(node: SchemaNode, graph: SchemaGraph): string {
  if (node.branches !== null) {
    const names = node.branches.map((b) => branchLabel(node.branches!, b, graph));
    return node.nullable ? `${names.join('|')}|null` : names.join('|');
  }
  if (node.enumValues !== null && node.enumValues.length > 0) {
    const values = `one of ${valuesText(node.enumValues)}`;
    return node.nullable ? `${values} or null` : values;
  }
  // A titled schema is named by its type's name; the title is what a reader of the code knows.
  if (typeof node.kw.title === 'string' && node.types !== null && !node.types.has('string')) {
    return node.nullable ? `${node.kw.title}|null` : node.kw.title;
  }
  return typesText(node.types);
}

export function plural(count: number, unit: string): string {
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

export function limitText(value: number, unit: string): string {
  return Number.isFinite(value) ? plural(value, unit) : 'no limit';
}
