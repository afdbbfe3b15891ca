/** JSON value helpers shared by the schema comparison. */

export type JsonType = 'null' | 'boolean' | 'object' | 'array' | 'number' | 'integer' | 'string';

/** The order types are listed in messages, so that messages are stable. */
export const TYPE_ORDER: readonly JsonType[] = ['boolean', 'integer', 'number', 'string', 'array', 'object', 'null'];

/** Every value, as types: `integer` is left out because `number` already covers it. */
export const EVERY_TYPE: readonly JsonType[] = ['boolean', 'number', 'string', 'array', 'object', 'null'];

const TYPE_NAMES: ReadonlySet<string> = new Set(TYPE_ORDER);

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function typeOfValue(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'string':
      return 'string';
    default:
      return 'object';
  }
}

/** A key equal for equal JSON values (object keys sorted), for enum membership. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Deep equality of JSON values (object member order aside), without allocating: two equal
 * schema documents cannot break anything, and most tools do not change between versions.
 * With `refs` false it also says the values hold no `$ref`: two such schemas mean the same
 * whatever documents they sit in, so the pair can be skipped without reading it.
 */
export function sameJson(a: unknown, b: unknown, refs = true): boolean {
  // Without refs allowed, an object is read even when it is the same object, to look for `$ref`.
  if (a === b && (refs || typeof a !== 'object' || a === null)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i], refs)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const key in ra) {
    if (!Object.hasOwn(ra, key)) continue;
    if (!refs && key === '$ref') return false;
    if (!Object.hasOwn(rb, key) || !sameJson(ra[key], rb[key], refs)) return false;
    count++;
  }
  for (const key in rb) if (Object.hasOwn(rb, key)) count--;
  return count === 0;
}

/** `sameJson` for schemas that must also hold no `$ref` to be skipped (see there). */
export function sameWithoutRefs(a: unknown, b: unknown): boolean {
  return sameJson(a, b, false);
}

const SINGLE_TYPES: ReadonlyMap<string, ReadonlySet<JsonType>> = new Map(TYPE_ORDER.map((t) => [t, new Set([t])]));

/** The `type` keyword as a set (shared: never change it); `null` when absent or unreadable (any type). */
export function typesFromKeyword(keyword: unknown): ReadonlySet<JsonType> | null {
  if (typeof keyword === 'string') return SINGLE_TYPES.get(keyword) ?? null;
  if (Array.isArray(keyword)) {
    const names = keyword.filter((t): t is JsonType => typeof t === 'string' && TYPE_NAMES.has(t));
    return names.length === keyword.length ? new Set(names) : null;
  }
  return null;
}

/** Whether a value of type `t` can satisfy the type set (`null` set: any type). */
export function typeAllows(types: ReadonlySet<JsonType> | null, t: JsonType): boolean {
  if (types === null) return true;
  return types.has(t) || (t === 'integer' && types.has('number'));
}

/** The values both sets allow, keeping `integer` where one side says `number`. */
export function intersectTypes(a: ReadonlySet<JsonType> | null, b: ReadonlySet<JsonType> | null): Set<JsonType> | null {
  if (a === null) return b === null ? null : new Set(b);
  if (b === null) return new Set(a);
  const out = new Set<JsonType>();
  for (const t of a) if (typeAllows(b, t)) out.add(t);
  for (const t of b) if (typeAllows(a, t)) out.add(t);
  return out;
}

export function typesText(types: ReadonlySet<JsonType> | null): string {
  if (types === null) return 'any type';
  if (types.size === 0) return 'nothing';
  return TYPE_ORDER.filter((t) => types.has(t)).join('|');
}
