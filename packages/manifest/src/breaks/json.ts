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

/** The `type` keyword as a set; `null` when it is absent or unreadable (any type). */
export function typesFromKeyword(keyword: unknown): Set<JsonType> | null {
  if (typeof keyword === 'string') return TYPE_NAMES.has(keyword) ? new Set([keyword as JsonType]) : null;
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
export function intersectTypes(
  a: ReadonlySet<JsonType> | null,
  b: ReadonlySet<JsonType> | null,
): Set<JsonType> | null {
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
