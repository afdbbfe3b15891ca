/**
 * What form a JSON Schema gets: a control for what a control can say (a string, a number with its
 * range, a boolean, one of an enum, an array of such, an object of such), and a JSON text box for
 * the rest (unions, tuples, maps, `$ref` cycles, `true`).
 */

export type Schema = Record<string, unknown>;

export type Kind = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

/** Nesting past this depth is edited as JSON: a recursive type would otherwise draw forever. */
const MAX_DEPTH = 6;

/** Keywords a control cannot express. */
const ONLY_JSON = ['oneOf', 'anyOf', 'allOf', 'not', 'if', 'prefixItems', 'patternProperties', 'dependentSchemas', 'unevaluatedProperties'];

export const isSchemaObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A local `$ref` (`#/$defs/X`, `#/definitions/X`) followed to its schema; anything else is returned as is. */
export function resolve(schema: unknown, root: unknown, seen: readonly string[] = []): { schema: unknown; seen: readonly string[] } {
  let current = schema;
  let path = seen;
  while (isSchemaObject(current) && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (path.includes(ref) || !ref.startsWith('#')) return { schema: undefined, seen: path };
    path = [...path, ref];
    let node: unknown = root;
    for (const raw of ref.slice(1).split('/').slice(1)) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      node = isSchemaObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
    }
    if (node === undefined) return { schema: undefined, seen: path };
    current = node;
  }
  return { schema: current, seen: path };
}

function typeOf(schema: Schema): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) {
    // `["T", "null"]`, as Option<T> renders: a T, or left out.
    const types = schema.type.filter((t) => t !== 'null');
    return types.length === 1 && typeof types[0] === 'string' ? types[0] : undefined;
  }
  if (isSchemaObject(schema.properties)) return 'object';
  return undefined;
}

export function kindOf(schema: unknown, depth: number): Kind {
  if (!isSchemaObject(schema) || depth > MAX_DEPTH) return 'json';
  if (ONLY_JSON.some((k) => k in schema)) return 'json';
  if ((Array.isArray(schema.enum) && schema.enum.length > 0) || 'const' in schema) return 'enum';
  switch (typeOf(schema)) {
    case 'object':
      return isSchemaObject(schema.properties) ? 'object' : 'json';
    case 'array':
      return isSchemaObject(schema.items) ? 'array' : 'json';
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    default:
      return 'json';
  }
}

export function enumValues(schema: Schema): unknown[] {
  return 'const' in schema ? [schema.const] : (schema.enum as unknown[]);
}

export function requiredOf(schema: Schema): Set<string> {
  return new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
}

/** A JSON text box's content that does not parse: kept as typed, and reported when the form is sent. */
export class InvalidJson {
  constructor(readonly text: string) {}
}

/** Where a value holds text that is not JSON, as JSON pointers. */
export function invalidJsonAt(value: unknown, pointer = ''): string[] {
  if (value instanceof InvalidJson) return [pointer];
  if (Array.isArray(value)) return value.flatMap((v, i) => invalidJsonAt(v, `${pointer}/${i}`));
  if (isSchemaObject(value))
    return Object.entries(value).flatMap(([k, v]) => invalidJsonAt(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`));
  return [];
}

/**
 * What a form starts with: the schema's `default` where it has one, `false` for a required boolean
 * (a checkbox is always one or the other), and an object for a required object; nothing elsewhere.
 */
export function initialValue(schema: unknown, root: unknown, depth = 0, seen: readonly string[] = []): unknown {
  const resolved = resolve(schema, root, seen);
  const s = resolved.schema;
  if (!isSchemaObject(s)) return undefined;
  if ('default' in s) return structuredClone(s.default);
  if (kindOf(s, depth) !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  const properties = s.properties as Record<string, unknown>;
  for (const name of requiredOf(s)) {
    const property = resolve(properties[name], root, resolved.seen);
    const kind = kindOf(property.schema, depth + 1);
    const value = kind === 'boolean' ? false : initialValue(property.schema, root, depth + 1, property.seen);
    if (value !== undefined) out[name] = value;
  }
  return out;
}
