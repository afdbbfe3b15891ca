/**
 * A manifest's schemas as a client of the tools reads them. Generated schemas carry formats no JSON
 * Schema validator knows (`"format": "uint32"`), and validators warn about each one (ajv: `unknown
 * format "uint32" ignored`), or refuse the schema in strict mode. `standardSchema` writes what such a
 * format means in the keywords every 2020-12 validator reads: a number format becomes the range it
 * names (`minimum`/`maximum`); any other format JSON Schema does not define is left out (in 2020-12 a
 * format is an annotation, so no validator checked it). Everything else is kept as written but one
 * keyword, `x-mcp-header`: MCP 2026-07-28 makes it a transport contract, not an annotation (a client
 * must copy the argument into an `Mcp-Param-*` header, drops the whole tool when the annotation breaks
 * a rule of the transport, and the server must refuse a call whose header and body disagree). A manifest
 * describes tools for any caller and bermd routes on no such header, so clients are never asked to send
 * one. The manifest itself, and what `breaks` compares, keep the originals.
 *
 * Ranges wider than a double holds exactly are cut to the safe integers, ±(2^53 − 1): an int64's
 * bounds have more digits than a double, a client parsing JSON into doubles (as bermd itself does)
 * cannot tell 2^63 − 1 from 2^63, and a bound it reads as another number would admit what the format
 * excludes. Every integer in the range written is one every JSON reader holds exactly.
 */
import { FORMAT_BOUNDS, INTEGER_FORMATS, isNumberFormat } from './number-formats.js';
import type { JsonSchema } from './types.js';

/** The formats JSON Schema 2020-12 defines (Validation, §7.3): the ones a standard validator knows. */
export const STANDARD_FORMATS: ReadonlySet<string> = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'idn-email',
  'hostname',
  'idn-hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uri-reference',
  'iri',
  'iri-reference',
  'uuid',
  'uri-template',
  'json-pointer',
  'relative-json-pointer',
  'regex',
]);

/** Keywords whose value is one schema. */
const ONE = [
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
];
/** Keywords whose value is a list of schemas (`items` as a list is draft-07's tuple). */
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
/** Keywords whose value maps names to schemas (`dependencies` may also map a name to a list of names). */
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];

type SchemaObject = { [keyword: string]: unknown };

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An integer format's bound as a double every reader holds exactly: past ±(2^53 − 1), the safe integer nearest it. */
function safeBound(text: string): number {
  return Math.min(Number.MAX_SAFE_INTEGER, Math.max(-Number.MAX_SAFE_INTEGER, Number(text)));
}

/** Whether the schema's `type` lets numbers through (no `type` does). */
function admitsNumbers(schema: SchemaObject): boolean {
  const type = schema.type;
  const types = Array.isArray(type) ? type : [type];
  return type === undefined || types.includes('integer') || types.includes('number');
}

/** The schema's keywords with `format` replaced by what a standard validator checks, or the schema itself when its format is standard. */
function withoutFormat(schema: SchemaObject): SchemaObject {
  const format = schema.format;
  if (typeof format !== 'string' || STANDARD_FORMATS.has(format)) return schema;
  const { format: _format, ...rest } = schema;
  if (!isNumberFormat(format) || !admitsNumbers(schema)) return rest;
  const [lo, hi] = FORMAT_BOUNDS[format]!;
  const wide = INTEGER_FORMATS.has(format);
  if (lo !== null) {
    const bound = wide ? safeBound(lo) : Number(lo);
    const { minimum, exclusiveMinimum } = rest;
    const tighter =
      (typeof minimum === 'number' && minimum >= bound) || (typeof exclusiveMinimum === 'number' && exclusiveMinimum >= bound);
    if (!tighter) rest.minimum = bound;
  }
  if (hi !== null) {
    const bound = wide ? safeBound(hi) : Number(hi);
    const { maximum, exclusiveMaximum } = rest;
    const tighter =
      (typeof maximum === 'number' && maximum <= bound) || (typeof exclusiveMaximum === 'number' && exclusiveMaximum <= bound);
    if (!tighter) rest.maximum = bound;
  }
  return rest;
}

/** The keyword by which a 2026-07-28 tool asks its clients to mirror an argument into an `Mcp-Param-*` header. */
const MCP_HEADER_KEYWORD = 'x-mcp-header';

function rewrite(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  let out = withoutFormat(schema);
  if (MCP_HEADER_KEYWORD in out) {
    const { [MCP_HEADER_KEYWORD]: _header, ...rest } = out;
    out = rest;
  }
  const set = (key: string, value: unknown): void => {
    if (value === out[key]) return;
    if (out === schema) out = { ...schema };
    out[key] = value;
  };
  for (const key of ONE) set(key, rewrite(out[key]));
  for (const key of LIST) {
    const list = out[key];
    if (!Array.isArray(list)) continue;
    const next = list.map(rewrite);
    if (next.some((s, i) => s !== list[i])) set(key, next);
  }
  for (const key of MAP) {
    const map = out[key];
    if (!isObject(map)) continue;
    let next: SchemaObject | undefined;
    for (const [name, sub] of Object.entries(map)) {
      const rewritten = rewrite(sub);
      if (rewritten !== sub) (next ??= { ...map })[name] = rewritten;
    }
    if (next !== undefined) set(key, next);
  }
  return out;
}

/**
 * `schema` as any JSON Schema 2020-12 validator reads it without a warning: number formats become the
 * ranges they mean, other formats the standard does not define are left out, and so is `x-mcp-header`,
 * wherever a schema sits (properties, items, `$defs`, ...; never inside `const`, `enum`, `default` or `examples`). Parts
 * with nothing to change are the same objects as in `schema`, which itself is never changed.
 */
export function standardSchema<T extends JsonSchema>(schema: T): T {
  return rewrite(schema) as T;
}
