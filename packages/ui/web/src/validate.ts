/**
 * The arguments check the page runs before sending: @cfworker/json-schema, which interprets a
 * schema rather than compiling it to code, because the page's Content-Security-Policy allows no
 * `eval` (ajv compiles with `new Function`, and it is 40 KB gzipped against this one's 6 KB).
 */
import { Validator } from '@cfworker/json-schema';

export interface Problem {
  /** A JSON pointer into the arguments (`""` for the whole). */
  path: string;
  message: string;
}

/** Keywords whose error only says that one of the errors listed beside it happened inside. */
const WRAPPERS = new Set([
  'properties',
  'items',
  'prefixItems',
  'additionalItems',
  '$ref',
  '$dynamicRef',
  'allOf',
  'patternProperties',
  'dependentSchemas',
  'then',
  'else',
  'contains',
]);

/** Keywords whose value is data, not a schema: a `format` member in there is data too. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

/**
 * bermd does not check `format` (images built with the Rust macros write formats such as `uint32`
 * no validator knows; see its runtime's validators), so the page does not either: a form that
 * refused what the daemon accepts would be wrong.
 */
function withoutFormats(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutFormats);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'format' && typeof value === 'string') continue;
    out[key] = DATA_KEYWORDS.has(key) ? value : withoutFormats(value);
  }
  return out;
}

/** Every problem `value` has against `schema` (JSON Schema 2020-12), or none. */
export function check(schema: unknown, value: unknown): Problem[] {
  if (schema === true || schema === undefined) return [];
  const validator = new Validator(withoutFormats(schema) as object, '2020-12', false);
  const { valid, errors } = validator.validate(value);
  if (valid) return [];
  const leaves = errors.filter((e) => !WRAPPERS.has(e.keyword));
  return (leaves.length > 0 ? leaves : errors).map((e) => ({ path: e.instanceLocation.replace(/^#/, ''), message: e.error }));
}
