import { canonical, intersectTypes, isObject, TYPE_ORDER, typesFromKeyword } from './json.js';

/** A schema object's keywords, after `$ref` and `allOf` have been folded in. */
export type Keywords = Readonly<Record<string, unknown>>;

/**
 * Keywords that describe a schema without constraining what it accepts. They are dropped
 * while folding so that a `$ref` with only a description beside it is the referenced schema
 * itself (which keeps recursive types recognisable as the same node).
 */
export const ANNOTATIONS: ReadonlySet<string> = new Set([
  '$schema',
  '$id',
  '$anchor',
  '$comment',
  '$defs',
  'definitions',
  'description',
  'examples',
  'example',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

const LOWER_BOUNDS = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']);
const UPPER_BOUNDS = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']);
const SUBSCHEMAS = new Set(['additionalProperties', 'items', 'additionalItems', 'propertyNames', 'contains']);

const combined = new WeakMap<object, WeakMap<object, object>>();

/**
 * Both schemas at once, written so that it stays a schema (folded again when read). The
 * same two schemas always give the same object: a schema that refers to itself while adding
 * keywords would otherwise make a new one at every level and never be seen to recur.
 */
function both(a: unknown, b: unknown): unknown {
  if (a === false || b === false) return false;
  if (a === true || a === b) return b;
  if (b === true) return a;
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return { allOf: [a, b] };
  let withA = combined.get(a);
  if (withA === undefined) {
    withA = new WeakMap();
    combined.set(a, withA);
  }
  let out = withA.get(b);
  if (out === undefined) {
    out = { allOf: [a, b] };
    withA.set(b, out);
  }
  return out;
}

function mergeProperties(a: unknown, b: unknown): unknown {
  if (!isObject(a) || !isObject(b)) return isObject(a) ? a : b;
  const out: Record<string, unknown> = { ...a };
  for (const [name, schema] of Object.entries(b)) {
    out[name] = Object.hasOwn(out, name) ? both(out[name], schema) : schema;
  }
  return out;
}

/**
 * The keywords of a value that must satisfy both `a` and `b` (as `allOf` means). Where two
 * constraints cannot be combined exactly (two patterns, two `multipleOf`s), `a` wins:
 * `a` is always the schema nearer the use site.
 */
export function mergeKeywords(a: Keywords, b: Keywords): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [key, vb] of Object.entries(b)) {
    if (vb === undefined) continue;
    const va = out[key];
    if (va === undefined) {
      out[key] = vb;
      continue;
    }
    if (key === 'type') {
      const types = intersectTypes(typesFromKeyword(va), typesFromKeyword(vb));
      out.type = types === null ? va : TYPE_ORDER.filter((t) => types.has(t));
    } else if (key === 'enum' && Array.isArray(va) && Array.isArray(vb)) {
      const keep = new Set(vb.map(canonical));
      out.enum = va.filter((v) => keep.has(canonical(v)));
    } else if (key === 'const') {
      if (canonical(va) !== canonical(vb)) out.type = [];
    } else if (key === 'required' && Array.isArray(va) && Array.isArray(vb)) {
      out.required = [...new Set([...va, ...vb])];
    } else if (key === 'properties' || key === 'patternProperties') {
      out[key] = mergeProperties(va, vb);
    } else if (SUBSCHEMAS.has(key)) {
      out[key] = both(va, vb);
    } else if (LOWER_BOUNDS.has(key) && typeof va === 'number' && typeof vb === 'number') {
      out[key] = Math.max(va, vb);
    } else if (UPPER_BOUNDS.has(key) && typeof va === 'number' && typeof vb === 'number') {
      out[key] = Math.min(va, vb);
    } else if (key === 'uniqueItems') {
      out[key] = va === true || vb === true;
    } else if (key === 'nullable') {
      out[key] = va === true && vb === true;
    }
  }
  return out;
}
