import { type BreakCodesOfSide, type Side, SIDE_CODES } from './codes.js';
import { compareArrays } from './arrays.js';
import { nodeText } from './describe.js';
import { type Finding, finding, FindingCollector, type FindingTree, NO_FINDINGS } from './findings.js';
import { EVERY_TYPE, type JsonType, TYPE_ORDER, typeAllows } from './json.js';
import type { SchemaGraph, SchemaNode } from './nodes.js';
import { MAX_SCHEMA_DEPTH, SchemaTooDeep } from './limits.js';
import { compareObjects } from './objects.js';
import { compareScalars } from './scalars.js';
import { compareUnions } from './unions.js';
import { narrowWide, type Walk } from './walk.js';

const NONE: JsonType[] = [];

function typesNotCovered(inner: ReadonlySet<JsonType> | null, outer: ReadonlySet<JsonType> | null): JsonType[] {
  if (outer === null) return NONE;
  if (inner !== null && inner.size === 1) {
    for (const t of inner) return typeAllows(outer, t) ? NONE : [t];
  }
  const candidates = inner === null ? EVERY_TYPE : TYPE_ORDER.filter((t) => inner.has(t));
  return candidates.filter((t) => !typeAllows(outer, t));
}

/**
 * One recursive comparison of two schemas, for either side of the wire.
 *
 * Every rule is written once in terms of a *narrow* schema (what is actually sent across)
 * and a *wide* one (what the receiving end copes with): nothing breaks while the wide
 * schema allows everything the narrow one does. For arguments (`reader`) old is narrow and
 * next wide: next must accept what old callers send. For results and events (`writer`)
 * next is narrow and old wide: old callers must cope with what next writes. The side then
 * only picks the code and the wording.
 *
 * Pairs of nodes already under comparison are cut short, so recursive types terminate, and
 * the findings of a finished pair are kept as a tree that every place meeting the same pair
 * again shares. Scalars, arrays, objects and unions are compared in their own modules.
 */
export class SchemaWalk implements Walk {
  // Keyed by both node ids in one number (ids stay far below 2^26 in one comparison).
  private readonly memo = new Map<number, FindingTree>();
  private readonly active = new Map<number, number>();
  private cut = Infinity;
  readonly reader: boolean;
  readonly codes: BreakCodesOfSide;

  constructor(
    readonly graph: SchemaGraph,
    side: Side,
  ) {
    this.reader = side === 'reader';
    this.codes = SIDE_CODES[side];
  }

  compare(old: SchemaNode, next: SchemaNode): FindingTree {
    if (old === next) return NO_FINDINGS;
    const key = old.id * 0x4000000 + next.id;
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    const activeAt = this.active.get(key);
    if (activeAt !== undefined) {
      // A recursive type met itself: what differs inside is reported once, further up.
      this.cut = Math.min(this.cut, activeAt);
      return NO_FINDINGS;
    }
    const depth = this.active.size;
    if (depth >= MAX_SCHEMA_DEPTH) throw new SchemaTooDeep();
    this.active.set(key, depth);
    const outerCut = this.cut;
    this.cut = Infinity;
    const found = this.compareNodes(old, next);
    this.active.delete(key);
    // Only a result that does not lean on an unfinished outer pair may be reused elsewhere.
    if (this.cut >= depth) {
      this.memo.set(key, found);
      this.cut = outerCut;
    } else {
      this.cut = Math.min(outerCut, this.cut);
    }
    return found;
  }

  node(raw: unknown, owner: SchemaNode): SchemaNode {
    return this.graph.node(raw, owner.root);
  }

  text(node: SchemaNode): string {
    return nodeText(node, this.graph);
  }

  sides(old: SchemaNode, next: SchemaNode): string {
    return `(was ${this.text(old)}, now ${this.text(next)})`;
  }

  private compareNodes(old: SchemaNode, next: SchemaNode): FindingTree {
    const [narrow, wide] = narrowWide(this, old, next);
    if (narrow.never) return NO_FINDINGS;
    if (wide.never) {
      const out = new FindingCollector();
      out.add(
        finding(
          'type-changed',
          this.reader ? `no longer accepts anything (was ${this.text(old)})` : `may now be ${this.text(next)} (old never wrote it)`,
        ),
      );
      return out.done();
    }
    if (old.branches !== null || next.branches !== null) return compareUnions(this, old, next);
    return this.compareFacets(old, next);
  }

  typeFinding(old: SchemaNode, next: SchemaNode, lost: readonly JsonType[], narrow: SchemaNode): Finding {
    const sides = this.sides(old, next);
    if (lost.length === 1 && lost[0] === 'null') {
      return finding('type-changed', this.reader ? `is no longer nullable ${sides}` : `may now be null ${sides}`);
    }
    if (this.reader) return finding('type-changed', `no longer accepts ${lost.join('|')} ${sides}`);
    return finding('type-changed', `may now be ${narrow.types === null ? 'anything' : lost.join('|')} ${sides}`);
  }

  private compareFacets(old: SchemaNode, next: SchemaNode): FindingTree {
    const out = new FindingCollector();
    const [narrow, wide] = narrowWide(this, old, next);
    if (old.types !== null && next.types !== null && (old.nullable || next.nullable)) {
      // Nullability is settled here and the rest compared as its own pair: the pair without
      // null is the one a recursive type meets again, so the cycle is seen where it starts.
      if (narrow.nullable && !wide.nullable) out.add(this.typeFinding(old, next, ['null'], narrow));
      out.addTree(null, this.compare(this.graph.withoutNull(old), this.graph.withoutNull(next)));
      return out.done();
    }
    const lost = typesNotCovered(narrow.types, wide.types);
    if (lost.length > 0) out.add(this.typeFinding(old, next, lost, narrow));
    compareScalars(this, old, next, out);
    if (typeAllows(narrow.types, 'array') && typeAllows(wide.types, 'array')) compareArrays(this, old, next, out);
    if (typeAllows(narrow.types, 'object') && typeAllows(wide.types, 'object')) compareObjects(this, old, next, out);
    return out.done();
  }
}
