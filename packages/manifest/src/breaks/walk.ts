import type { BreakCodesOfSide } from './codes.js';
import type { Finding, FindingTree } from './findings.js';
import type { JsonType } from './json.js';
import type { SchemaGraph, SchemaNode } from './nodes.js';
import { valueText } from './describe.js';

/**
 * What the parts of the comparison share: the side being compared, its codes, and the
 * recursion back into the walk (which keeps memo and cycle detection in one place).
 */
export interface Walk {
  /** Arguments (`true`): next reads what old callers wrote. Results and events: old callers read next. */
  readonly reader: boolean;
  readonly codes: BreakCodesOfSide;
  readonly graph: SchemaGraph;
  compare(old: SchemaNode, next: SchemaNode): FindingTree;
  /** The node of a schema found inside `owner`'s document. */
  node(raw: unknown, owner: SchemaNode): SchemaNode;
  /** A schema named by what it allows, for messages. */
  text(node: SchemaNode): string;
  /** `(was …, now …)` for two schemas. */
  sides(old: SchemaNode, next: SchemaNode): string;
  typeFinding(old: SchemaNode, next: SchemaNode, lost: readonly JsonType[], narrow: SchemaNode): Finding;
}

/**
 * [narrow, wide]: what crosses the wire, and what the other end copes with. Every rule is
 * written once against these: nothing breaks while wide allows all that narrow does.
 */
export function narrowWide<T>(walk: Walk, old: T, next: T): [T, T] {
  return walk.reader ? [old, next] : [next, old];
}

export function shown(value: unknown): string {
  return value === undefined ? 'unset' : valueText(value);
}

/** `maxLength was 10, now unset`: one keyword on both sides. */
export function change(keyword: string, old: SchemaNode, next: SchemaNode): string {
  return `${keyword} was ${shown(old.kw[keyword])}, now ${shown(next.kw[keyword])}`;
}
