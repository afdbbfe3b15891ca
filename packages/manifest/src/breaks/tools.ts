import { ManifestError } from '../errors.js';
import type { EventSpec, ManifestData, ToolSpec } from '../types.js';
import type { Break, BreakCode, Side } from './codes.js';
import { oneLine } from './describe.js';
import { contentBreaks } from './content.js';
import { effectBreaks } from './effects.js';
import { surfaceBreaks } from './prompts.js';
import { type Finding, flatten, labelOf, pointerOf } from './findings.js';
import { sameJson } from './json.js';
import { SchemaTooDeep } from './limits.js';
import { SchemaGraph } from './nodes.js';
import { SchemaWalk } from './schema-walk.js';

/**
 * How many breaks one schema may list before a changed shared definition stops being
 * repeated at every place that uses it (see `flatten`). Real manifests stay far below it.
 */
const SHARED_REPEAT_BUDGET = 1000;

/** Which schema of which tool or event a finding is in, and how its places are named. */
interface Scope {
  owner: { tool: string } | { event: string };
  /** Where the schema is in old's merged manifest (`/tools/2/returns`), for errors. */
  where: string;
  /** The schema's place in the tool or event: `/arguments`, `/returns`, `/fields`. */
  base: string;
  /** Names the place of a finding from its label (`""` for the whole schema). */
  subject: (label: string) => string;
}

function toolScope(tool: string, index: number, base: '/arguments' | '/returns'): Scope {
  const name = `tool \`${tool}\``;
  return {
    owner: { tool },
    where: `/tools/${index}${base}`,
    base,
    subject:
      base === '/arguments'
        ? (label) => (label === '' ? `the arguments object of ${name}` : `argument \`${label}\` of ${name}`)
        : (label) => (label === '' ? `the result of ${name}` : `result field \`${label}\` of ${name}`),
  };
}

function eventScope(event: string, index: number): Scope {
  const name = `event \`${event}\``;
  return {
    owner: { event },
    where: `/events/${index}/fields`,
    base: '/fields',
    subject: (label) => (label === '' ? `the fields object of ${name}` : `field \`${label}\` of ${name}`),
  };
}

function toBreak(scope: Scope, f: Finding): Break {
  return {
    code: f.code,
    ...scope.owner,
    path: scope.base + pointerOf(f.segments),
    message: oneLine(`${scope.subject(labelOf(f.segments))} ${f.detail}`),
  };
}

function whole(code: BreakCode, owner: Scope['owner'], path: string, message: string): Break {
  return { code, ...owner, path, message: oneLine(message) };
}

function byName<T extends { name: string }>(list: readonly T[] | undefined): Map<string, T> {
  const out = new Map<string, T>();
  for (const item of list ?? []) if (!out.has(item.name)) out.set(item.name, item);
  return out;
}

/**
 * Compares one schema of a tool or event. Absent schemas read as `true`: a tool without
 * `returns` promised nothing about its result. Each schema resolves its `$ref`s against
 * itself, as it would stand alone in an MCP tool listing.
 */
function compareSchemas(graph: SchemaGraph, side: Side, scope: Scope, old: unknown, next: unknown): Break[] {
  if (sameJson(old, next)) return [];
  const walk = new SchemaWalk(graph, side);
  try {
    const found = walk.compare(graph.node(old ?? true, old), graph.node(next ?? true, next));
    return flatten(found, SHARED_REPEAT_BUDGET).map((f) => toBreak(scope, f));
  } catch (e) {
    if (!(e instanceof SchemaTooDeep)) throw e;
    throw new ManifestError('invalid-manifest', `invalid manifest at ${scope.where} (old or next): ${e.message}, too deep to compare`, {
      path: scope.where,
    });
  }
}

function toolBreaks(graph: SchemaGraph, old: ToolSpec, index: number, next: ToolSpec | undefined): Break[] {
  const owner = { tool: old.name };
  if (next === undefined) {
    const was = old.deprecated === true ? ' (it was deprecated)' : '';
    return [whole('tool-removed', owner, '', `tool \`${old.name}\` was removed${was}`)];
  }
  const out: Break[] = [];
  if (old.query === true && next.query !== true) {
    out.push(
      whole(
        'tool-no-longer-query',
        owner,
        '/query',
        `tool \`${old.name}\` is no longer a query: it may now change state (query was true, now unset)`,
      ),
    );
  }
  out.push(...effectBreaks(old, next));
  out.push(...contentBreaks(old, next));
  out.push(...compareSchemas(graph, 'reader', toolScope(old.name, index, '/arguments'), old.arguments, next.arguments));
  out.push(...compareSchemas(graph, 'writer', toolScope(old.name, index, '/returns'), old.returns, next.returns));
  return out;
}

function eventBreaks(graph: SchemaGraph, old: EventSpec, index: number, next: EventSpec | undefined): Break[] {
  if (next === undefined) {
    const was = old.deprecated === true ? ' (it was deprecated)' : '';
    return [whole('event-removed', { event: old.name }, '', `event \`${old.name}\` was removed${was}`)];
  }
  return compareSchemas(graph, 'writer', eventScope(old.name, index), old.fields, next.fields);
}

/**
 * Every way `next` breaks a caller of `old`, as data. The order is fixed: tools in old's
 * order, then events in old's order; within one, the tool itself, then its arguments, then
 * its result, each walked in the order old's schema lists things. Whether any of this fails
 * a build or a deploy is for the caller to decide.
 *
 * Throws only a `ManifestError` (`invalid-manifest`), when schemas chain references deeper
 * than can be compared (see `limits.ts`).
 */
export function breaks(old: ManifestData, next: ManifestData): Break[] {
  const graph = new SchemaGraph();
  const out: Break[] = [];
  const nextTools = byName(next.tools);
  const oldTools = byName(old.tools);
  (old.tools ?? []).forEach((tool, i) => {
    if (oldTools.get(tool.name) === tool) out.push(...toolBreaks(graph, tool, i, nextTools.get(tool.name)));
  });
  const nextEvents = byName(next.events);
  const oldEvents = byName(old.events);
  (old.events ?? []).forEach((event, i) => {
    if (oldEvents.get(event.name) === event) out.push(...eventBreaks(graph, event, i, nextEvents.get(event.name)));
  });
  out.push(...surfaceBreaks(old, next));
  return dedupe(out);
}

/** The same break reached twice (a branch compared as a pair and as a fallback) is listed once. */
function dedupe(list: Break[]): Break[] {
  const seen = new Set<string>();
  return list.filter((b) => {
    const key = `${b.code}\u0000${b.tool ?? ''}\u0000${b.event ?? ''}\u0000${b.prompt ?? ''}\u0000${b.resource ?? ''}\u0000${b.path}\u0000${b.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
