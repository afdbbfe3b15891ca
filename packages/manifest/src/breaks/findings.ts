import type { BreakCode } from './codes.js';
import { escapePointerToken } from './refs.js';

/** One step into a schema: its pointer text and how a person names it (`.units`, `[]`, `<circle>`). */
export interface Segment {
  readonly pointer: string;
  readonly label: string;
}

/** A break found inside one schema, placed relative to the node it was found at. */
export interface Finding {
  readonly code: BreakCode;
  readonly segments: readonly Segment[];
  /** The predicate of the message: what changed, with both sides. */
  readonly detail: string;
}

/**
 * The findings of one pair of schemas, as a tree: findings and subtrees in walk order. A
 * pair met again (a shared `$defs` type) returns the same tree, so comparing stays linear
 * in the size of the schemas even where the number of paths to a definition is not.
 */
export interface FindingTree {
  readonly entries: ReadonlyArray<Finding | Subtree>;
  /** Nothing anywhere below: the pair is compatible. */
  readonly empty: boolean;
}

interface Subtree {
  readonly step: Segment | null;
  readonly tree: FindingTree;
}

function isSubtree(entry: Finding | Subtree): entry is Subtree {
  return 'tree' in entry;
}

export const NO_FINDINGS: FindingTree = { entries: [], empty: true };

/** Gathers one pair's findings; allocates nothing until there is something to keep. */
export class FindingCollector {
  private entries: Array<Finding | Subtree> | null = null;

  add(found: Finding, step: Segment | null = null): void {
    (this.entries ??= []).push(step === null ? found : { ...found, segments: [step, ...found.segments] });
  }

  addTree(step: Segment | null, tree: FindingTree): void {
    if (!tree.empty) (this.entries ??= []).push({ step, tree });
  }

  done(): FindingTree {
    return this.entries === null ? NO_FINDINGS : { entries: this.entries, empty: false };
  }
}

export const segment = {
  property: (name: string): Segment => ({ pointer: `/properties/${escapePointerToken(name)}`, label: `.${name}` }),
  /** The values of a map: `tags.*`. */
  additional: { pointer: '/additionalProperties', label: '.*' } as Segment,
  /** The object's catch-all itself, named as the object (what it closes is the object). */
  closure: { pointer: '/additionalProperties', label: '' } as Segment,
  items: { pointer: '/items', label: '[]' } as Segment,
  prefixItem: (index: number): Segment => ({ pointer: `/prefixItems/${index}`, label: `[${index}]` }),
  variant: (keyword: string, label: string): Segment => ({
    pointer: `/${keyword}/${escapePointerToken(label)}`,
    label: `<${label}>`,
  }),
  /** A whole branch, gone or new: placed at the branch, named as the union (the message names the branch). */
  wholeVariant: (keyword: string, label: string): Segment => ({
    pointer: `/${keyword}/${escapePointerToken(label)}`,
    label: '',
  }),
};

export function finding(code: BreakCode, detail: string): Finding {
  return { code, segments: [], detail };
}

/**
 * Lays a tree out as a list, in walk order, every finding placed by its full path. A shared
 * subtree is listed at each place it is used while the list is shorter than `budget`; past
 * that, one already listed is not listed again, which bounds the list where a definition
 * is reachable by exponentially many paths.
 */
export function flatten(tree: FindingTree, budget: number): Finding[] {
  const out: Finding[] = [];
  const listed = new Set<FindingTree>();
  const visit = (node: FindingTree, prefix: readonly Segment[]): void => {
    for (const entry of node.entries) {
      if (!isSubtree(entry)) {
        out.push({ ...entry, segments: [...prefix, ...entry.segments] });
      } else if (!listed.has(entry.tree) || out.length < budget) {
        listed.add(entry.tree);
        visit(entry.tree, entry.step === null ? prefix : [...prefix, entry.step]);
      }
    }
  };
  visit(tree, []);
  return out;
}

export function pointerOf(segments: readonly Segment[]): string {
  return segments.map((s) => s.pointer).join('');
}

/** How a person names the place: `items[].id`, `shape<circle>.radius`. Empty for the schema's root. */
export function labelOf(segments: readonly Segment[]): string {
  const text = segments.map((s) => s.label).join('');
  return text.startsWith('.') ? text.slice(1) : text;
}
