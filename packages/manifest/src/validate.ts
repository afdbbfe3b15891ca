import { ManifestError } from './errors.js';
import { validate, type ValidatorError } from './manifest-validator.js';
import type { Deps, EventSpec, ManifestData, PromptSpec, ResourceSpec, ToolSpec } from './types.js';
import { escapeRawControls } from './json-text.js';
import { checkEffects } from './effects.js';
import { checkPrompts } from './prompts.js';
import { checkResources } from './resources.js';

type Json = Record<string, unknown>;

/**
 * Validates a merged manifest against `schema/manifest.schema.json` and returns a fresh, normalized
 * copy: missing strings are `""`, missing `tools`/`events` are `[]`, `deps` is complete, known
 * members come first in a fixed order and members the schema does not name are kept after them.
 * The schemas in `arguments`, `returns` and `fields` are checked against the JSON Schema 2020-12
 * meta-schema. The validator is generated from the schema by the build (scripts/build-validator.js),
 * so reading an image neither loads nor runs ajv's compiler. An `abi_version` other than `ABI_VERSION` is accepted here: refusing it is the host's
 * call at deploy, and a reader must still be able to show what such an image declares.
 */
export function validateManifest(value: unknown): ManifestData {
  checkDepth(value);
  const manifest = jsonCopy(value);
  let valid: boolean;
  try {
    valid = validate(manifest);
  } catch (e) {
    // The depth bound keeps the recursive validator well inside the stack; this is the backstop.
    if (!(e instanceof RangeError)) throw e;
    throw new ManifestError('invalid-manifest', `invalid manifest at /: too deeply nested to validate (${e.message})`, { path: '' });
  }
  if (!valid) throw fromAjv(validate.errors![0]!, manifest);
  const data = manifest as Json;
  checkUnique(data.tools as Json[] | undefined, 'tools', 'tool');
  checkUnique(data.events as Json[] | undefined, 'events', 'event');
  const normalized = normalize(data);
  checkEffects(normalized);
  checkPrompts(normalized);
  checkResources(normalized);
  return normalized;
}

/**
 * How deep arrays and objects may nest. Copying and validating recurse, and a hostile image can nest
 * JSON far deeper than a stack goes (JSON.parse itself does not mind); real manifests, schemas
 * included, stay within a few dozen levels, and the validator overflows past roughly a thousand.
 */
export const MAX_DEPTH = 128;

/** Rejects nesting beyond MAX_DEPTH, walking with an explicit stack so the check itself cannot overflow. */
function checkDepth(value: unknown): void {
  interface Node {
    value: unknown;
    depth: number;
    parent?: Node;
    key?: string;
  }
  const stack: Node[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (typeof node.value !== 'object' || node.value === null) continue;
    if (node.depth >= MAX_DEPTH) {
      const tokens: string[] = [];
      for (let n: Node | undefined = node; n?.key !== undefined; n = n.parent) tokens.push(escapePointer(n.key));
      const path = tokens.length ? `/${tokens.reverse().join('/')}` : '';
      throw new ManifestError('invalid-manifest', `invalid manifest at ${path}: nested deeper than ${MAX_DEPTH} levels (or circular)`, {
        path,
      });
    }
    for (const [key, child] of Object.entries(node.value)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: node.depth + 1, parent: node, key });
    }
  }
}

/** A deep copy that is plain JSON, so nothing returned aliases the caller's objects. */
function jsonCopy(value: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    const detail = e instanceof Error ? ` (${e.message.split('\n')[0]})` : '';
    throw new ManifestError('invalid-manifest', `invalid manifest at /: not a JSON value${detail}`, { path: '' });
  }
  if (text === undefined) throw new ManifestError('invalid-manifest', 'invalid manifest at /: not a JSON value', { path: '' });
  return JSON.parse(text);
}

/** Where the schema keeps its rule for names and one-line labels (`$defs/line`): no control characters. */
const LINE_RULE = '#/$defs/line/pattern';
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** What a value breaking the line rule holds, and where: `a control character (U+001B at index 3)`. */
function controlCharacter(text: string): string {
  const at = text.search(CONTROL);
  const code = text.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0');
  return `a control character (U+${code} at index ${at})`;
}

function fromAjv(error: ValidatorError & { propertyName?: string }, manifest: unknown): ManifestError {
  let path = error.instancePath;
  let problem = error.message ?? `fails "${error.keyword}"`;
  if (error.schemaPath === LINE_RULE) {
    // The pattern itself would say nothing a reader can act on. A member name (of deps.syscalls) is
    // quoted rather than put in the path, where it would be raw.
    const value = error.propertyName ?? at(manifest, path);
    const what = typeof value === 'string' ? controlCharacter(value) : 'a control character';
    problem = `${error.propertyName !== undefined ? 'a member name holds' : 'holds'} ${what}, which a name or a one-line label may not`;
    const found = shortJson(value);
    if (found !== undefined) problem += `, found ${found}`;
    return new ManifestError('invalid-manifest', `invalid manifest at ${path || '/'}: ${problem}`, { path });
  } else if (error.keyword === 'required') {
    const member = String((error.params as { missingProperty: string }).missingProperty);
    path = `${path}/${escapePointer(member)}`;
    problem = 'is required and missing';
  } else {
    if (error.keyword === 'type') problem = problem.replace(/,/g, ' or ');
    if (error.keyword === 'enum') {
      problem += ` (${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')})`;
    }
    const found = shortJson(at(manifest, path));
    if (found !== undefined) problem += `, found ${found}`;
  }
  return new ManifestError('invalid-manifest', `invalid manifest at ${path || '/'}: ${problem}`, { path });
}

function checkUnique(list: Json[] | undefined, member: 'tools' | 'events', what: string): void {
  const seen = new Map<string, number>();
  list?.forEach((item, index) => {
    const name = item.name as string;
    const first = seen.get(name);
    if (first !== undefined) {
      const path = `/${member}/${index}/name`;
      throw new ManifestError(
        'invalid-manifest',
        `invalid manifest at ${path}: ${what} name "${name}" is already used by /${member}/${first}`,
        { path },
      );
    }
    seen.set(name, index);
  });
}

function normalize(m: Json): ManifestData {
  return ordered(m, {
    abi_version: m.abi_version,
    version: m.version ?? '',
    description: m.description ?? '',
    homepage: m.homepage ?? '',
    repository: m.repository ?? '',
    readme: m.readme ?? '',
    usage: m.usage ?? '',
    tools: ((m.tools as Json[] | undefined) ?? []).map(normalizeTool),
    events: ((m.events as Json[] | undefined) ?? []).map(normalizeEvent),
    deps: normalizeDeps((m.deps as Json | undefined) ?? {}),
    prompts: (m.prompts as Json[] | undefined)?.map(normalizePrompt),
    resources: (m.resources as Json[] | undefined)?.map(normalizeResource),
    resource_templates: (m.resource_templates as Json[] | undefined)?.map(normalizeResource),
  }) as unknown as ManifestData;
}

function normalizeTool(t: Json): ToolSpec {
  return ordered(t, {
    name: t.name,
    description: t.description ?? '',
    arguments: t.arguments,
    returns: t.returns,
    query: t.query,
    deprecated: t.deprecated,
    effect: t.effect,
    content: t.content,
  }) as unknown as ToolSpec;
}

function normalizeEvent(e: Json): EventSpec {
  return ordered(e, { name: e.name, description: e.description ?? '', fields: e.fields, deprecated: e.deprecated }) as unknown as EventSpec;
}

function normalizePrompt(p: Json): PromptSpec {
  const args = ((p.arguments as Json[] | undefined) ?? []).map((a) =>
    ordered(a, { name: a.name, description: a.description ?? '', required: a.required, complete: a.complete }),
  );
  return ordered(p, { name: p.name, description: p.description ?? '', arguments: args }) as unknown as PromptSpec;
}

function normalizeResource(r: Json): ResourceSpec {
  return ordered(r, {
    path: r.path,
    name: r.name,
    description: r.description ?? '',
    mimeType: r.mimeType,
    complete: r.complete,
  }) as unknown as ResourceSpec;
}

function normalizeDeps(d: Json): Deps {
  return ordered(d, { programs: d.programs ?? [], syscalls: d.syscalls ?? {}, secrets: d.secrets ?? [] }) as unknown as Deps;
}

/**
 * `known` members in their order (those still undefined, i.e. optional and absent, left out), then
 * the source's other members. Built with Object.fromEntries so a `__proto__` member stays data.
 */
function ordered(source: Json, known: Json): Json {
  const entries = Object.entries(known).filter(([, v]) => v !== undefined);
  for (const entry of Object.entries(source)) if (!Object.hasOwn(known, entry[0])) entries.push(entry);
  return Object.fromEntries(entries);
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function at(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let node = value;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, token)) return undefined;
    node = (node as Json)[token];
  }
  return node;
}

/** A scalar as JSON, cut short; objects and arrays are left to the path to locate. */
function shortJson(value: unknown): string | undefined {
  if (value === undefined || (typeof value === 'object' && value !== null)) return undefined;
  // A message quoting a value holds no control character.
  const text = escapeRawControls(JSON.stringify(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
