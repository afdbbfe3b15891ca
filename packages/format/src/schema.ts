import type { JsonSchema } from '@berm/manifest';

/**
 * JSON Schemas rendered as compact, TypeScript-like one-liners for people reading a manifest:
 * `Forecast{high: number, low?: integer ≥0}`, `string[]`, `"a"|"b"`, `Day | null`.
 * Lossy on purpose: `--json` is there for the exact schema.
 */

type SchemaObject = { [keyword: string]: unknown };

/** Objects nested deeper than this show their name only, so one tool stays one line. */
const EXPANDED_OBJECT_DEPTH = 2;
/** Longer enums show their first values and a count. */
const ENUM_SHOWN = 8;

interface Context {
  /** The schema local `$ref`s resolve against. */
  root: JsonSchema;
  /** Refs being expanded on the way down: meeting one again is a cycle, shown by name. */
  expanding: ReadonlySet<string>;
  /** How many objects enclose this one. */
  depth: number;
}

/** A rendering and whether it is a union that needs parentheses inside `T[]`. */
interface Rendered {
  text: string;
  union: boolean;
}

const isObject = (value: unknown): value is SchemaObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `schema` in one line; `root` is the document its `$ref`s point into (the schema itself by default). */
export function renderSchema(schema: JsonSchema, root: JsonSchema = schema): string {
  return render(schema, { root, expanding: new Set(), depth: 0 }).text;
}

/**
 * A tool's argument list, `city: string, days?: integer ≥0`, from its arguments schema
 * (an object schema). Anything that is not an object with properties renders as a type.
 */
export function renderArguments(schema: JsonSchema, root: JsonSchema = schema): string {
  const ctx: Context = { root, expanding: new Set(), depth: 0 };
  const { schema: target, ctx: inner } = followRef(schema, ctx);
  if (isObject(target) && isObject(target.properties)) {
    return renderProperties(target, { ...inner, depth: inner.depth + 1 });
  }
  if (isObject(target) && target.type === 'object' && !isObject(target.additionalProperties) && !hasBranches(target)) return '';
  return render(schema, ctx).text;
}

function hasBranches(schema: SchemaObject): boolean {
  return Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf) || Array.isArray(schema.allOf);
}

function render(schema: unknown, ctx: Context): Rendered {
  if (schema === true || (isObject(schema) && Object.keys(schema).length === 0)) return single('any');
  if (schema === false) return single('never');
  if (!isObject(schema)) return single('any');

  if (typeof schema.$ref === 'string') return renderRef(schema.$ref, ctx);
  if ('const' in schema) return single(literal(schema.const));
  if (Array.isArray(schema.enum)) return renderEnum(schema.enum);

  const branches = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (branches) return union(branches.map((b) => render(b, ctx).text));
  if (Array.isArray(schema.allOf)) {
    if (schema.allOf.length === 1) return render(schema.allOf[0], ctx);
    return single(schema.allOf.map((b) => parenthesised(render(b, ctx))).join(' & '));
  }

  const types = typesOf(schema);
  if (types.length === 0) return single('any');
  const parts = types.filter((t) => t !== 'null').map((t) => renderTyped(t, schema, ctx));
  if (types.includes('null')) parts.push('null');
  return union(parts);
}

function typesOf(schema: SchemaObject): string[] {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === 'string');
  if (isObject(schema.properties) || 'additionalProperties' in schema) return ['object'];
  if ('items' in schema || 'prefixItems' in schema) return ['array'];
  return [];
}

function renderTyped(type: string, schema: SchemaObject, ctx: Context): string {
  switch (type) {
    case 'object':
      return renderObject(schema, ctx);
    case 'array':
      return renderArray(schema, ctx);
    case 'integer':
    case 'number':
      return `${type}${range(schema)}`;
    case 'string':
      return typeof schema.format === 'string' ? `string(${schema.format})` : 'string';
    default:
      return type;
  }
}

function renderObject(schema: SchemaObject, ctx: Context): string {
  const title = typeof schema.title === 'string' ? schema.title : '';
  const properties = isObject(schema.properties) ? schema.properties : undefined;
  const extra = schema.additionalProperties;
  const hasExtra = extra !== undefined && extra !== false;
  if (!properties && !hasExtra) return title || 'object';
  if (ctx.depth >= EXPANDED_OBJECT_DEPTH) return title || '{…}';
  const inner = { ...ctx, depth: ctx.depth + 1 };
  const members: string[] = [];
  if (properties) members.push(renderProperties(schema, inner));
  // An object with properties accepts unknown members unless told otherwise; only a typed map says something.
  if (hasExtra && (!properties || extra !== true)) members.push(`[key: string]: ${render(extra, inner).text}`);
  return `${title}{${members.filter(Boolean).join(', ')}}`;
}

function renderProperties(schema: SchemaObject, ctx: Context): string {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(properties)
    .map(([name, sub]) => `${name}${required.has(name) ? '' : '?'}: ${render(sub, ctx).text}`)
    .join(', ');
}

function renderArray(schema: SchemaObject, ctx: Context): string {
  if (Array.isArray(schema.prefixItems)) {
    const items = schema.prefixItems.map((s) => render(s, ctx).text);
    if (schema.items !== undefined && schema.items !== false) items.push(`...${parenthesised(render(schema.items, ctx))}[]`);
    return `[${items.join(', ')}]`;
  }
  if (schema.items === undefined) return 'any[]';
  return `${parenthesised(render(schema.items, ctx))}[]`;
}

function range(schema: SchemaObject): string {
  const bounds: string[] = [];
  if (typeof schema.exclusiveMinimum === 'number') bounds.push(`>${schema.exclusiveMinimum}`);
  else if (typeof schema.minimum === 'number') bounds.push(`≥${schema.minimum}`);
  if (typeof schema.exclusiveMaximum === 'number') bounds.push(`<${schema.exclusiveMaximum}`);
  else if (typeof schema.maximum === 'number') bounds.push(`≤${schema.maximum}`);
  return bounds.length ? ` ${bounds.join(' ')}` : '';
}

function renderEnum(values: unknown[]): Rendered {
  const shown = values.slice(0, ENUM_SHOWN).map(literal);
  if (values.length > ENUM_SHOWN) shown.push(`…${values.length - ENUM_SHOWN} more`);
  return { text: shown.join('|'), union: values.length > 1 };
}

function renderRef(ref: string, ctx: Context): Rendered {
  const name = refName(ref);
  if (ctx.expanding.has(ref) || ctx.depth >= EXPANDED_OBJECT_DEPTH) return single(name);
  const target = resolvePointer(ctx.root, ref);
  if (target === undefined) return single(name);
  const named = isObject(target) && typeof target.title !== 'string' && isObjectSchema(target) ? { ...target, title: name } : target;
  return render(named, { ...ctx, expanding: new Set([...ctx.expanding, ref]) });
}

/** Follows `$ref`s at the top of a schema, for callers that need the object underneath. */
function followRef(schema: JsonSchema, ctx: Context): { schema: unknown; ctx: Context } {
  let current: unknown = schema;
  let expanding = new Set(ctx.expanding);
  while (isObject(current) && typeof current.$ref === 'string' && !expanding.has(current.$ref)) {
    const next = resolvePointer(ctx.root, current.$ref);
    if (next === undefined) break;
    expanding = new Set([...expanding, current.$ref]);
    current = next;
  }
  return { schema: current, ctx: { ...ctx, expanding } };
}

function isObjectSchema(schema: SchemaObject): boolean {
  return schema.type === 'object' || isObject(schema.properties);
}

/** The last segment of a ref, which for `#/$defs/Forecast` is the type's name. */
function refName(ref: string): string {
  const segment = ref.slice(ref.lastIndexOf('/') + 1);
  return decodePointerSegment(segment) || ref;
}

/** Resolves a local ref (`#/$defs/X`, `#/definitions/X`, any JSON pointer into the root). */
function resolvePointer(root: JsonSchema, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  const pointer = ref.slice(1);
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = decodePointerSegment(raw);
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isObject(node) && Object.hasOwn(node, key)) node = node[key];
    else return undefined;
  }
  return node;
}

function decodePointerSegment(segment: string): string {
  let text = segment;
  try {
    text = decodeURIComponent(segment);
  } catch {
    // a stray `%` is part of the name
  }
  return text.replace(/~1/g, '/').replace(/~0/g, '~');
}

function literal(value: unknown): string {
  return JSON.stringify(value) ?? 'undefined';
}

function single(text: string): Rendered {
  return { text, union: false };
}

function union(parts: string[]): Rendered {
  const distinct = [...new Set(parts)];
  return { text: distinct.join(' | '), union: distinct.length > 1 };
}

function parenthesised(rendered: Rendered): string {
  return rendered.union ? `(${rendered.text})` : rendered.text;
}
