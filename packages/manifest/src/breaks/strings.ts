import type { SchemaNode } from './nodes.js';
import { isNumberFormat } from '../number-formats.js';

/** The node's `format` when it constrains strings (integer and float formats bound numbers instead). */
export function stringFormat(node: SchemaNode): string | undefined {
  const f = node.kw.format;
  return typeof f === 'string' && !isNumberFormat(f) ? f : undefined;
}

export function maxLengthOf(node: SchemaNode): number {
  const m = node.kw.maxLength;
  return typeof m === 'number' ? m : Infinity;
}

export function minLengthOf(node: SchemaNode): number {
  const m = node.kw.minLength;
  return typeof m === 'number' ? m : 0;
}

export function patternOf(node: SchemaNode): string | undefined {
  const p = node.kw.pattern;
  return typeof p === 'string' ? p : undefined;
}

const compiled = new Map<string, RegExp | null>();

function regex(pattern: string): RegExp | null {
  let re = compiled.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, 'u');
    } catch {
      re = null;
    }
    compiled.set(pattern, re);
  }
  return re;
}

/**
 * Whether one string satisfies the node's string constraints. A format cannot be checked
 * without a validator for it, and a pattern this engine cannot compile cannot be checked
 * either: both are given the benefit of the doubt, so they never invent a break.
 */
export function acceptsString(node: SchemaNode, value: string): boolean {
  const length = [...value].length;
  if (length > maxLengthOf(node) || length < minLengthOf(node)) return false;
  const pattern = patternOf(node);
  const re = pattern === undefined ? null : regex(pattern);
  return re === null || re.test(value);
}
