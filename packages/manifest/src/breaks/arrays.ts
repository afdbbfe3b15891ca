import type { BreakCode } from './codes.js';
import { plural } from './describe.js';
import { finding, type FindingCollector, segment } from './findings.js';
import type { SchemaNode } from './nodes.js';
import { narrowWide, type Walk } from './walk.js';

/** The shape of an array schema, whichever draft spelled it. */
interface ArrayShape {
  prefix: readonly unknown[];
  /** The schema of items after the prefix; `undefined` is `true`. */
  rest: unknown;
  min: number;
  max: number;
  unique: boolean;
}

function arrayShape(node: SchemaNode): ArrayShape {
  const kw = node.kw;
  // Before 2020-12 a tuple was `items: [...]` with `additionalItems` for the rest.
  const prefix = Array.isArray(kw.prefixItems) ? kw.prefixItems : Array.isArray(kw.items) ? kw.items : [];
  const rest = Array.isArray(kw.items) ? kw.additionalItems : kw.items;
  const min = typeof kw.minItems === 'number' ? kw.minItems : 0;
  let max = typeof kw.maxItems === 'number' ? kw.maxItems : Infinity;
  if (rest === false) max = Math.min(max, prefix.length);
  return { prefix, rest, min, max, unique: kw.uniqueItems === true };
}

function elementAt(shape: ArrayShape, index: number): unknown {
  return index < shape.prefix.length ? shape.prefix[index] : shape.rest;
}

/**
 * Item counts and uniqueness break as `array-constraint-changed`; what changed inside the
 * items is compared like any schema, so it carries the code of what changed there.
 */
export function compareArrays(walk: Walk, old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
  const oldShape = arrayShape(old);
  const nextShape = arrayShape(next);
  const [narrow, wide] = narrowWide(walk, oldShape, nextShape);
  const code: BreakCode = 'array-constraint-changed';
  const count = (n: number): string => (Number.isFinite(n) ? String(n) : 'unset');
  const counts = (name: string, o: number, n: number): string => `${name} was ${count(o)}, now ${count(n)}`;
  if (narrow.min < wide.min) {
    const sides = counts('minItems', oldShape.min, nextShape.min);
    out.add(
      finding(
        code,
        walk.reader
          ? `now needs at least ${plural(nextShape.min, 'item')} (${sides})`
          : `may now have fewer than ${plural(oldShape.min, 'item')} (${sides})`,
      ),
    );
  }
  if (narrow.max > wide.max) {
    const sides = counts('maxItems', oldShape.max, nextShape.max);
    out.add(
      finding(
        code,
        walk.reader
          ? `now accepts at most ${plural(nextShape.max, 'item')} (${sides})`
          : `may now have more than ${plural(oldShape.max, 'item')} (${sides})`,
      ),
    );
  }
  if (wide.unique && !narrow.unique) {
    out.add(
      finding(
        code,
        walk.reader
          ? 'now requires unique items (uniqueItems was unset, now true)'
          : 'may now repeat items (uniqueItems was true, now unset)',
      ),
    );
  }
  const prefixLength = Math.max(oldShape.prefix.length, nextShape.prefix.length);
  for (let i = 0; i < prefixLength; i++) {
    // An index the narrow side never fills is moot; one the wide side forbids is a count change above.
    if (i >= narrow.max || i >= wide.max) break;
    const found = walk.compare(walk.node(elementAt(oldShape, i), old), walk.node(elementAt(nextShape, i), next));
    if (!found.empty) out.addTree(segment.prefixItem(i), found);
  }
  if (narrow.max > prefixLength && wide.max > prefixLength) {
    const found = walk.compare(walk.node(oldShape.rest, old), walk.node(nextShape.rest, next));
    out.addTree(segment.items, found);
  }
}
