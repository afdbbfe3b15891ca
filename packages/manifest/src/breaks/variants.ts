import { canonical, typeAllows, typesText } from './json.js';
import type { SchemaGraph, SchemaNode } from './nodes.js';

/**
 * How the branches of two unions are matched up. Position means nothing (reordering branches
 * breaks no caller), so branches are paired by what names them, most specific first: the
 * `title` generated schemas give each variant type, the `const` of a tag property shared by
 * the branches (`{"kind": {"const": "circle"}}`), the single required property of an
 * externally tagged variant, a literal value, and finally the type of a primitive branch.
 * A key pairs two branches only when it names exactly one branch on each side.
 */
type KeyOf = (branch: SchemaNode, graph: SchemaGraph) => string | undefined;

function tagOf(branch: SchemaNode, graph: SchemaGraph): { prop: string; value: unknown } | undefined {
  const props = branch.kw.properties;
  if (!typeAllows(branch.types, 'object') || props === null || typeof props !== 'object') return undefined;
  for (const [prop, schema] of Object.entries(props as Record<string, unknown>)) {
    const node = graph.node(schema, branch.root);
    if (node.branches === null && node.enumValues !== null && node.enumValues.length === 1) {
      const value = node.enumValues[0];
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return { prop, value };
    }
  }
  return undefined;
}

/** `{"Circle": {...}}`: one required property and no other allowed, as serde writes enum variants. */
function externalTagOf(branch: SchemaNode): string | undefined {
  const props = branch.kw.properties;
  const required = branch.kw.required;
  if (props === null || typeof props !== 'object' || !Array.isArray(required) || branch.kw.additionalProperties !== false) return undefined;
  const names = Object.keys(props);
  return names.length === 1 && required.includes(names[0]) ? names[0] : undefined;
}

function titleOf(branch: SchemaNode): string | undefined {
  return typeof branch.kw.title === 'string' ? branch.kw.title : undefined;
}

function literalOf(branch: SchemaNode): unknown {
  return branch.enumValues !== null && branch.enumValues.length === 1 ? branch.enumValues[0] : undefined;
}

const KEYS: readonly KeyOf[] = [
  (b) => {
    const title = titleOf(b);
    return title === undefined ? undefined : `title:${title}`;
  },
  (b, g) => {
    const tag = tagOf(b, g);
    return tag === undefined ? undefined : `tag:${tag.prop}=${canonical(tag.value)}`;
  },
  (b) => {
    const prop = externalTagOf(b);
    return prop === undefined ? undefined : `external:${prop}`;
  },
  (b) => {
    const literal = literalOf(b);
    return literal === undefined ? undefined : `literal:${canonical(literal)}`;
  },
  (b) => (b.branches === null ? `type:${typesText(b.types)}` : undefined),
];

export interface Pairing {
  /** Matched branches, in the order of the old union. */
  pairs: Array<[SchemaNode, SchemaNode]>;
  oldLeft: SchemaNode[];
  nextLeft: SchemaNode[];
}

function groupBy(branches: readonly SchemaNode[], keyOf: KeyOf, graph: SchemaGraph): Map<string, SchemaNode[]> {
  const groups = new Map<string, SchemaNode[]>();
  for (const b of branches) {
    const key = keyOf(b, graph);
    if (key === undefined) continue;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [b]);
    else group.push(b);
  }
  return groups;
}

export function pairBranches(old: readonly SchemaNode[], next: readonly SchemaNode[], graph: SchemaGraph): Pairing {
  const partner = new Map<SchemaNode, SchemaNode>();
  const taken = new Set<SchemaNode>();
  for (const keyOf of KEYS) {
    const oldGroups = groupBy(
      old.filter((b) => !partner.has(b)),
      keyOf,
      graph,
    );
    const nextGroups = groupBy(
      next.filter((b) => !taken.has(b)),
      keyOf,
      graph,
    );
    for (const [key, olds] of oldGroups) {
      const nexts = nextGroups.get(key);
      if (olds.length === 1 && nexts !== undefined && nexts.length === 1) {
        partner.set(olds[0], nexts[0]);
        taken.add(nexts[0]);
      }
    }
  }
  return {
    pairs: old.filter((b) => partner.has(b)).map((b) => [b, partner.get(b)!]),
    oldLeft: old.filter((b) => !partner.has(b)),
    nextLeft: next.filter((b) => !taken.has(b)),
  };
}

function labelFor(branch: SchemaNode, graph: SchemaGraph): string {
  const title = titleOf(branch);
  if (title !== undefined) return title;
  const tag = tagOf(branch, graph);
  if (tag !== undefined) return typeof tag.value === 'string' ? tag.value : canonical(tag.value);
  const external = externalTagOf(branch);
  if (external !== undefined) return external;
  const literal = literalOf(branch);
  if (literal !== undefined) return typeof literal === 'string' ? literal : canonical(literal);
  return typesText(branch.types);
}

const labelCache = new WeakMap<readonly SchemaNode[], Map<SchemaNode, string>>();

/** The name a branch goes by in paths and messages; its position when its name is not unique. */
export function branchLabel(branches: readonly SchemaNode[], branch: SchemaNode, graph: SchemaGraph): string {
  let labels = labelCache.get(branches);
  if (labels === undefined) {
    const names = branches.map((b) => labelFor(b, graph));
    labels = new Map(branches.map((b, i) => [b, names.indexOf(names[i]) === names.lastIndexOf(names[i]) ? names[i] : String(i)]));
    labelCache.set(branches, labels);
  }
  return labels.get(branch) ?? '?';
}
