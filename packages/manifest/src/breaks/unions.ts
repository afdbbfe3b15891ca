import type { BreakCode } from './codes.js';
import { finding, FindingCollector, type FindingTree, type Segment, segment } from './findings.js';
import { typeAllows } from './json.js';
import type { SchemaNode } from './nodes.js';
import { branchLabel, pairBranches } from './variants.js';
import { narrowWide, type Walk } from './walk.js';

/** Whether two branches can hold values of a common type (null aside). */
function shareType(a: SchemaNode, b: SchemaNode): boolean {
  if (a.types === null || b.types === null) return true;
  return [...a.types].some((t) => t !== 'null' && (typeAllows(b.types, t) || (t === 'number' && b.types!.has('integer'))));
}

/**
 * `oneOf`/`anyOf` on either side: nullability once for the whole union, then branches paired
 * by name (see `variants.ts`) and compared, then every narrow branch left over must still fit
 * some wide branch.
 */
export function compareUnions(walk: Walk, old: SchemaNode, next: SchemaNode): FindingTree {
  const out = new FindingCollector();
  const [narrow, wide] = narrowWide(walk, old, next);
  if (narrow.nullable && !wide.nullable) out.add(walk.typeFinding(old, next, ['null'], narrow));
  const oldBranches = walk.graph.branchesOf(old);
  const nextBranches = walk.graph.branchesOf(next);
  // Places follow old's structure; a branch only next has is placed in next's union.
  const oldStep = (b: SchemaNode): Segment | null =>
    old.branches !== null ? segment.variant(old.unionKeyword ?? 'oneOf', branchLabel(old.branches, b, walk.graph)) : null;

  const { pairs, oldLeft, nextLeft } = pairBranches(oldBranches, nextBranches, walk.graph);
  for (const [o, n] of pairs) {
    const found = walk.compare(o, n);
    if (!found.empty) out.addTree(oldStep(o), found);
  }

  // Unpaired narrow branches must still fit somewhere on the wide side.
  const [needed, otherLeft] = narrowWide(walk, oldLeft, nextLeft);
  const offered = walk.reader ? nextBranches : oldBranches;
  const fitsInto = (b: SchemaNode, o: SchemaNode): boolean => (walk.reader ? walk.compare(b, o) : walk.compare(o, b)).empty;
  const usedAsFit = new Set<SchemaNode>();
  const unfit: SchemaNode[] = [];
  for (const b of needed) {
    const home = otherLeft.find((o) => fitsInto(b, o)) ?? offered.find((o) => fitsInto(b, o));
    if (home === undefined) unfit.push(b);
    else usedAsFit.add(home);
  }
  const candidates = otherLeft.filter((o) => !usedAsFit.has(o));
  if (unfit.length === 1 && candidates.length === 1 && shareType(unfit[0], candidates[0])) {
    // One branch on each side that nothing named, of the same kind: the same variant,
    // changed (or renamed). Its differences say more than "removed" and "added" would.
    const [o, n] = narrowWide(walk, unfit[0], candidates[0]);
    out.addTree(oldStep(o), walk.compare(o, n));
    return out.done();
  }
  const step = (union: SchemaNode, b: SchemaNode): Segment | null =>
    union.branches !== null ? segment.wholeVariant(union.unionKeyword ?? 'oneOf', branchLabel(union.branches, b, walk.graph)) : null;
  // The variant codes need a union on old's side; a union appearing where old had one
  // schema changes the type instead.
  const code: BreakCode = old.branches !== null ? walk.codes.variant : 'type-changed';
  for (const b of unfit) {
    const owner = walk.reader ? old : next;
    const what = owner.branches !== null ? `variant \`${branchLabel(owner.branches, b, walk.graph)}\`` : walk.text(b);
    const detail = walk.reader ? `no longer accepts ${what} ${walk.sides(old, next)}` : `may now be ${what} ${walk.sides(old, next)}`;
    out.add(finding(code, detail), step(owner, b));
  }
  return out.done();
}
