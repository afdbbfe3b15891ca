import { FORMAT_BOUNDS, INTEGER_FORMATS, isNumberFormat } from '../number-formats.js';
import type { SchemaNode } from './nodes.js';

/** One end of a range of numbers; `text` keeps the exact digits of a 64/128-bit format bound. */
export interface Bound {
  value: number;
  exclusive: boolean;
  text?: string;
}

export interface NumberRange {
  lo: Bound;
  hi: Bound;
}

/** Whether values of the node are integers only (by type, or by an integer format). */
export function isIntegral(node: SchemaNode): boolean {
  const types = node.types === null ? [] : [...node.types].filter((t) => t !== 'null');
  if (types.length > 0 && types.every((t) => t === 'integer')) return true;
  return typeof node.kw.format === 'string' && INTEGER_FORMATS.has(node.kw.format) && !types.includes('string');
}

const OPEN_LO: Bound = { value: -Infinity, exclusive: false };
const OPEN_HI: Bound = { value: Infinity, exclusive: false };

function higherLo(a: Bound, b: Bound): Bound {
  if (a.value !== b.value) return a.value > b.value ? a : b;
  return a.exclusive ? a : b;
}

function lowerHi(a: Bound, b: Bound): Bound {
  if (a.value !== b.value) return a.value < b.value ? a : b;
  return a.exclusive ? a : b;
}

/** Integers in `> -1` are integers in `>= 0`: exclusive bounds become the next integer in. */
function integralLo(b: Bound): Bound {
  if (!Number.isFinite(b.value)) return b;
  const value = b.exclusive ? Math.floor(b.value) + 1 : Math.ceil(b.value);
  return value === b.value && !b.exclusive ? b : { value, exclusive: false };
}

function integralHi(b: Bound): Bound {
  if (!Number.isFinite(b.value)) return b;
  const value = b.exclusive ? Math.ceil(b.value) - 1 : Math.floor(b.value);
  return value === b.value && !b.exclusive ? b : { value, exclusive: false };
}

export function rangeOf(node: SchemaNode): NumberRange {
  const kw = node.kw;
  let lo = OPEN_LO;
  let hi = OPEN_HI;
  const format = kw.format;
  if (typeof format === 'string' && isNumberFormat(format)) {
    const [min, max] = FORMAT_BOUNDS[format];
    if (min !== null) lo = { value: Number(min), exclusive: false, text: min };
    if (max !== null) hi = { value: Number(max), exclusive: false, text: max };
  }
  // Draft 4 wrote exclusivity as a boolean beside minimum/maximum; 2020-12 as a number.
  if (typeof kw.minimum === 'number') lo = higherLo(lo, { value: kw.minimum, exclusive: kw.exclusiveMinimum === true });
  if (typeof kw.exclusiveMinimum === 'number') lo = higherLo(lo, { value: kw.exclusiveMinimum, exclusive: true });
  if (typeof kw.maximum === 'number') hi = lowerHi(hi, { value: kw.maximum, exclusive: kw.exclusiveMaximum === true });
  if (typeof kw.exclusiveMaximum === 'number') hi = lowerHi(hi, { value: kw.exclusiveMaximum, exclusive: true });
  if (isIntegral(node)) {
    lo = integralLo(lo);
    hi = integralHi(hi);
  }
  return { lo, hi };
}

/** Whether every number at or above `inner` is at or above `outer`. */
export function loWithin(inner: Bound, outer: Bound): boolean {
  return inner.value > outer.value || (inner.value === outer.value && (inner.exclusive || !outer.exclusive));
}

export function hiWithin(inner: Bound, outer: Bound): boolean {
  return inner.value < outer.value || (inner.value === outer.value && (inner.exclusive || !outer.exclusive));
}

export function rangeWithin(inner: NumberRange, outer: NumberRange): boolean {
  return loWithin(inner.lo, outer.lo) && hiWithin(inner.hi, outer.hi);
}

/** Whether negative numbers are in the range. */
export function allowsNegative(range: NumberRange): boolean {
  return range.lo.value < 0;
}

function boundText(b: Bound): string {
  if (b.value === -Infinity) return '-∞';
  if (b.value === Infinity) return '∞';
  return b.text ?? String(b.value);
}

export function rangeText(range: NumberRange): string {
  const open = range.lo.exclusive || range.lo.value === -Infinity ? '(' : '[';
  const close = range.hi.exclusive || range.hi.value === Infinity ? ')' : ']';
  return `${open}${boundText(range.lo)}, ${boundText(range.hi)}${close}`;
}

/** The step every value is a multiple of, if any (integers are multiples of 1). */
export function stepOf(node: SchemaNode): number | undefined {
  const m = node.kw.multipleOf;
  if (typeof m === 'number' && m > 0) return m;
  return isIntegral(node) ? 1 : undefined;
}

export function isMultipleOf(value: number, step: number): boolean {
  const ratio = value / step;
  return Math.abs(ratio - Math.round(ratio)) < 1e-9;
}

/** Whether a single number satisfies the node's numeric constraints. */
export function acceptsNumber(node: SchemaNode, value: number): boolean {
  const range = rangeOf(node);
  const point: Bound = { value, exclusive: false };
  if (!loWithin(point, range.lo) || !hiWithin(point, range.hi)) return false;
  const step = node.kw.multipleOf;
  if (typeof step === 'number' && step > 0 && !isMultipleOf(value, step)) return false;
  return !isIntegral(node) || Number.isInteger(value);
}
