import { type BreakCode, type Side, SIDE_CODES } from './codes.js';
import { limitText, nodeText, plural, valuesText, valueText } from './describe.js';
import { type Finding, finding, FindingCollector, type FindingTree, NO_FINDINGS, type Segment, segment } from './findings.js';
import { canonical, EVERY_TYPE, isObject, type JsonType, sameWithoutRefs, TYPE_ORDER, typeAllows, typeOfValue } from './json.js';
import type { SchemaGraph, SchemaNode } from './nodes.js';
import {
  acceptsNumber,
  allowsNegative,
  hiWithin,
  isIntegral,
  isMultipleOf,
  loWithin,
  rangeOf,
  rangeText,
  rangeWithin,
  stepOf,
} from './numbers.js';
import { acceptsString, maxLengthOf, minLengthOf, patternOf, stringFormat } from './strings.js';
import { branchLabel, pairBranches } from './variants.js';

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

function has(record: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(record, key);
}

function propertiesOf(node: SchemaNode): Record<string, unknown> {
  return isObject(node.kw.properties) ? node.kw.properties : {};
}

const NO_NAMES: readonly string[] = [];

function requiredOf(node: SchemaNode): readonly unknown[] {
  return Array.isArray(node.kw.required) ? node.kw.required : NO_NAMES;
}

/** The schema a property not listed in `properties` falls under: a matching pattern, or the rest. */
function unlistedSchema(node: SchemaNode, name: string): unknown {
  const patterns = node.kw.patternProperties;
  if (isObject(patterns)) {
    for (const [pattern, schema] of Object.entries(patterns)) {
      try {
        if (new RegExp(pattern, 'u').test(name)) return schema;
      } catch {
        // A pattern this engine cannot read decides nothing.
      }
    }
  }
  return node.kw.additionalProperties;
}

/** Whether two branches can hold values of a common type (null aside). */
function shareType(a: SchemaNode, b: SchemaNode): boolean {
  if (a.types === null || b.types === null) return true;
  return [...a.types].some((t) => t !== 'null' && (typeAllows(b.types, t) || (t === 'number' && b.types!.has('integer'))));
}

const NONE: JsonType[] = [];

function typesNotCovered(inner: ReadonlySet<JsonType> | null, outer: ReadonlySet<JsonType> | null): JsonType[] {
  if (outer === null) return NONE;
  if (inner !== null && inner.size === 1) {
    for (const t of inner) return typeAllows(outer, t) ? NONE : [t];
  }
  const candidates = inner === null ? EVERY_TYPE : TYPE_ORDER.filter((t) => inner.has(t));
  return candidates.filter((t) => !typeAllows(outer, t));
}

function shown(value: unknown): string {
  return value === undefined ? 'unset' : valueText(value);
}

function change(keyword: string, old: SchemaNode, next: SchemaNode): string {
  return `${keyword} was ${shown(old.kw[keyword])}, now ${shown(next.kw[keyword])}`;
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
 * the findings of a finished pair are kept (relative to the pair) and reused wherever the
 * same pair meets again.
 */
export class SchemaWalk {
  // Keyed by both node ids in one number (ids stay far below 2^26 in one comparison).
  private readonly memo = new Map<number, FindingTree>();
  private readonly active = new Map<number, number>();
  private cut = Infinity;
  private readonly reader: boolean;
  private readonly codes: (typeof SIDE_CODES)[Side];

  constructor(
    private readonly graph: SchemaGraph,
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

  private node(raw: unknown, owner: SchemaNode): SchemaNode {
    return this.graph.node(raw, owner.root);
  }

  /** [narrow, wide]: what crosses the wire, and what the other end copes with. */
  private narrowWide<T>(old: T, next: T): [T, T] {
    return this.reader ? [old, next] : [next, old];
  }

  private text(node: SchemaNode): string {
    return nodeText(node, this.graph);
  }

  private sides(old: SchemaNode, next: SchemaNode): string {
    return `(was ${this.text(old)}, now ${this.text(next)})`;
  }

  private compareNodes(old: SchemaNode, next: SchemaNode): FindingTree {
    const [narrow, wide] = this.narrowWide(old, next);
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
    if (old.branches !== null || next.branches !== null) return this.compareUnions(old, next);
    return this.compareFacets(old, next);
  }

  private typeFinding(old: SchemaNode, next: SchemaNode, lost: readonly JsonType[], narrow: SchemaNode): Finding {
    const sides = this.sides(old, next);
    if (lost.length === 1 && lost[0] === 'null') {
      return finding('type-changed', this.reader ? `is no longer nullable ${sides}` : `may now be null ${sides}`);
    }
    if (this.reader) return finding('type-changed', `no longer accepts ${lost.join('|')} ${sides}`);
    return finding('type-changed', `may now be ${narrow.types === null ? 'anything' : lost.join('|')} ${sides}`);
  }

  private compareFacets(old: SchemaNode, next: SchemaNode): FindingTree {
    const out = new FindingCollector();
    const [narrow, wide] = this.narrowWide(old, next);
    if (old.types !== null && next.types !== null && (old.nullable || next.nullable)) {
      // Nullability is settled here and the rest compared as its own pair: the pair without
      // null is the one a recursive type meets again, so the cycle is seen where it starts.
      if (narrow.nullable && !wide.nullable) out.add(this.typeFinding(old, next, ['null'], narrow));
      out.addTree(null, this.compare(this.graph.withoutNull(old), this.graph.withoutNull(next)));
      return out.done();
    }
    const lost = typesNotCovered(narrow.types, wide.types);
    if (lost.length > 0) out.add(this.typeFinding(old, next, lost, narrow));
    this.compareValues(old, next, out);
    if (typeAllows(narrow.types, 'array') && typeAllows(wide.types, 'array')) this.compareArrays(old, next, out);
    if (typeAllows(narrow.types, 'object') && typeAllows(wide.types, 'object')) this.compareObjects(old, next, out);
    return out.done();
  }

  // ---- scalar values: enums, strings, numbers ----

  private compareValues(old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
    const [narrow, wide] = this.narrowWide(old, next);
    if (narrow.enumValues !== null) {
      this.compareListedValues(old, next, out);
    } else if (wide.enumValues !== null) {
      this.compareNewlyListed(old, next, out);
    } else {
      if (typeAllows(narrow.types, 'string') && typeAllows(wide.types, 'string')) this.compareStrings(old, next, out);
      if (typeAllows(narrow.types, 'integer') && typeAllows(wide.types, 'integer')) this.compareNumbers(old, next, out);
    }
  }

  /** The narrow side lists its values: each must be one the wide side allows. */
  private compareListedValues(old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
    const [narrow, wide] = this.narrowWide(old, next);
    const unlisted: unknown[] = [];
    const badStrings: string[] = [];
    const badNumbers: number[] = [];
    for (const value of narrow.enumValues ?? []) {
      // A value of a type the wide side lacks is already reported as a type change.
      if (!typeAllows(wide.types, typeOfValue(value))) continue;
      if (wide.enumKeys !== null && !wide.enumKeys.has(canonical(value))) unlisted.push(value);
      else if (typeof value === 'string' && !acceptsString(wide, value)) badStrings.push(value);
      else if (typeof value === 'number' && !acceptsNumber(wide, value)) badNumbers.push(value);
    }
    // Enum values count as strings whatever their type: the code names the common case.
    if (unlisted.length > 0) {
      const values = valuesText(unlisted);
      out.add(finding(this.codes.strings, this.reader ? `no longer accepts ${values} ${this.sides(old, next)}` : `may now be ${values} ${this.sides(old, next)}`));
    }
    if (badStrings.length > 0) {
      const values = valuesText(badStrings);
      out.add(
        finding(
          this.codes.strings,
          this.reader ? `no longer accepts ${values} (now ${this.stringRules(next)})` : `may now be ${values} (was ${this.stringRules(old)})`,
        ),
      );
    }
    if (badNumbers.length > 0) {
      const values = valuesText(badNumbers);
      if (this.reader) {
        out.add(finding(this.codes.range, `no longer accepts ${values} (now ${rangeText(rangeOf(next))})`));
      } else {
        const oldRange = rangeOf(old);
        const signFlip = isIntegral(old) && oldRange.lo.value >= 0 && badNumbers.some((v) => v < 0);
        out.add(finding(signFlip ? 'unsigned-became-signed' : this.codes.range, `may now be ${values} (was ${rangeText(oldRange)})`));
      }
    }
  }

  /** Only the wide side lists values: the narrow side's are unlimited. */
  private compareNewlyListed(old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
    const [narrow, wide] = this.narrowWide(old, next);
    let code: BreakCode = 'type-changed';
    if (typeAllows(narrow.types, 'string') && typeAllows(wide.types, 'string')) code = this.codes.strings;
    else if (typeAllows(narrow.types, 'integer') && typeAllows(wide.types, 'integer')) code = this.codes.range;
    out.add(
      finding(
        code,
        this.reader
          ? `now accepts only ${valuesText(next.enumValues ?? [])} (was ${this.text(old)})`
          : `may now be any ${this.text(next)} (was ${this.text(old)})`,
      ),
    );
  }

  private stringRules(node: SchemaNode): string {
    const rules: string[] = [];
    if (typeof node.kw.minLength === 'number') rules.push(`minLength ${node.kw.minLength}`);
    if (typeof node.kw.maxLength === 'number') rules.push(`maxLength ${node.kw.maxLength}`);
    const pattern = patternOf(node);
    if (pattern !== undefined) rules.push(`pattern ${valueText(pattern)}`);
    return rules.length > 0 ? rules.join(', ') : 'no string rules';
  }

  private compareStrings(old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
    const [narrow, wide] = this.narrowWide(old, next);
    const code = this.codes.strings;
    if (maxLengthOf(narrow) > maxLengthOf(wide)) {
      out.add(
        finding(
          code,
          this.reader
            ? `now accepts at most ${limitText(maxLengthOf(next), 'character')} (${change('maxLength', old, next)})`
            : `may now be longer than ${limitText(maxLengthOf(old), 'character')} (${change('maxLength', old, next)})`,
        ),
      );
    }
    if (minLengthOf(narrow) < minLengthOf(wide)) {
      out.add(
        finding(
          code,
          this.reader
            ? `now needs at least ${plural(minLengthOf(next), 'character')} (${change('minLength', old, next)})`
            : `may now be shorter than ${plural(minLengthOf(old), 'character')} (${change('minLength', old, next)})`,
        ),
      );
    }
    const widePattern = patternOf(wide);
    if (widePattern !== undefined && patternOf(narrow) !== widePattern) {
      out.add(
        finding(
          code,
          this.reader
            ? `must now match ${valueText(widePattern)} (${change('pattern', old, next)})`
            : `may now not match ${valueText(widePattern)} (${change('pattern', old, next)})`,
        ),
      );
    }
    const wideFormat = stringFormat(wide);
    if (wideFormat !== undefined && stringFormat(narrow) !== wideFormat) {
      out.add(
        finding(
          code,
          this.reader
            ? `must now be in format ${valueText(wideFormat)} (${change('format', old, next)})`
            : `may now not be in format ${valueText(wideFormat)} (${change('format', old, next)})`,
        ),
      );
    }
  }

  private compareNumbers(old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
    const oldRange = rangeOf(old);
    const nextRange = rangeOf(next);
    if (this.reader) {
      if (!rangeWithin(oldRange, nextRange)) {
        out.add(finding(this.codes.range, `accepts a smaller range: ${rangeText(nextRange)} (was ${rangeText(oldRange)})`));
      }
    } else {
      const loWidened = !loWithin(nextRange.lo, oldRange.lo);
      const hiWidened = !hiWithin(nextRange.hi, oldRange.hi);
      // An integer that was never negative is what a caller stores in an unsigned type.
      const signFlip = loWidened && isIntegral(old) && oldRange.lo.value >= 0 && allowsNegative(nextRange);
      if (signFlip) {
        out.add(finding('unsigned-became-signed', `may now be negative (was ${rangeText(oldRange)}, now ${rangeText(nextRange)})`));
      }
      if (hiWidened || (loWidened && !signFlip)) {
        out.add(finding(this.codes.range, `may now be outside ${rangeText(oldRange)} (now ${rangeText(nextRange)})`));
      }
    }
    const [narrow, wide] = this.narrowWide(old, next);
    const wideStep = typeof wide.kw.multipleOf === 'number' && wide.kw.multipleOf > 0 ? wide.kw.multipleOf : undefined;
    if (wideStep !== undefined) {
      const narrowStep = stepOf(narrow);
      if (narrowStep === undefined || !isMultipleOf(narrowStep, wideStep)) {
        out.add(
          finding(
            this.codes.range,
            this.reader
              ? `now accepts only multiples of ${wideStep} (${change('multipleOf', old, next)})`
              : `may now be a number that is not a multiple of ${wideStep} (${change('multipleOf', old, next)})`,
          ),
        );
      }
    }
  }

  // ---- arrays ----

  private compareArrays(old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
    const oldShape = arrayShape(old);
    const nextShape = arrayShape(next);
    const [narrow, wide] = this.narrowWide(oldShape, nextShape);
    const code: BreakCode = 'array-constraint-changed';
    const count = (n: number): string => (Number.isFinite(n) ? String(n) : 'unset');
    const counts = (name: string, o: number, n: number): string => `${name} was ${count(o)}, now ${count(n)}`;
    if (narrow.min < wide.min) {
      const sides = counts('minItems', oldShape.min, nextShape.min);
      out.add(
        finding(
          code,
          this.reader
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
          this.reader
            ? `now accepts at most ${plural(nextShape.max, 'item')} (${sides})`
            : `may now have more than ${plural(oldShape.max, 'item')} (${sides})`,
        ),
      );
    }
    if (wide.unique && !narrow.unique) {
      out.add(finding(code, this.reader ? 'now requires unique items (uniqueItems was unset, now true)' : 'may now repeat items (uniqueItems was true, now unset)'));
    }
    const prefixLength = Math.max(oldShape.prefix.length, nextShape.prefix.length);
    for (let i = 0; i < prefixLength; i++) {
      // An index the narrow side never fills is moot; one the wide side forbids is a count change above.
      if (i >= narrow.max || i >= wide.max) break;
      const found = this.compare(this.node(elementAt(oldShape, i), old), this.node(elementAt(nextShape, i), next));
      if (!found.empty) out.addTree(segment.prefixItem(i), found);
    }
    if (narrow.max > prefixLength && wide.max > prefixLength) {
      const found = this.compare(this.node(oldShape.rest, old), this.node(nextShape.rest, next));
      out.addTree(segment.items, found);
    }
  }

  // ---- objects ----

  private compareObjects(old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
    const oldProps = propertiesOf(old);
    const nextProps = propertiesOf(next);
    const oldRequired = requiredOf(old);
    const nextRequired = requiredOf(next);
    // Old's properties, then next's new ones, then names only `required` lists: walk order.
    const names: string[] = [];
    for (const name in oldProps) names.push(name);
    for (const name in nextProps) if (!has(oldProps, name)) names.push(name);
    for (const name of [...oldRequired, ...nextRequired]) {
      if (typeof name === 'string' && !has(oldProps, name) && !has(nextProps, name) && !names.includes(name)) names.push(name);
    }
    for (const name of names) {
      const inOld = has(oldProps, name);
      const inNext = has(nextProps, name);
      if (this.reader && nextRequired.includes(name) && !oldRequired.includes(name)) {
        out.add(finding(this.codes.required, inOld ? 'is now required (was optional)' : 'is now required (it is new)'), segment.property(name));
      }
      if (!this.reader && oldRequired.includes(name) && !nextRequired.includes(name)) {
        out.add(finding(this.codes.required, inNext ? 'is now optional (was required)' : 'is gone (was always present)'), segment.property(name));
      }
      if (!inOld && !inNext) continue;
      const oldSchema = inOld ? oldProps[name] : unlistedSchema(old, name);
      const nextSchema = inNext ? nextProps[name] : unlistedSchema(next, name);
      if (this.reader && inOld && nextSchema === false && oldSchema !== false) {
        const why = inNext ? 'its schema is now false' : 'next has no such argument and accepts no others';
        out.add(finding('argument-no-longer-accepted', `is no longer accepted (${why})`), segment.property(name));
        continue;
      }
      // A property listed on one side only is compared with the other side's catch-all when
      // that is a schema (a map's values). Against `true` or `false` it breaks nothing: an
      // added field or argument is the additive change callers tolerate, an optional result
      // field that is gone was never promised, and an argument that is gone under an open
      // object is ignored rather than refused.
      if ((!inOld && typeof oldSchema === 'boolean') || (!inNext && typeof nextSchema === 'boolean')) continue;
      if (!inOld && oldSchema === undefined) continue;
      if (!inNext && nextSchema === undefined) continue;
      if (inOld && inNext && sameWithoutRefs(oldSchema, nextSchema)) continue;
      const found = this.compare(this.node(oldSchema, old), this.node(nextSchema, next));
      if (!found.empty) out.addTree(segment.property(name), found);
    }
    const oldRest = old.kw.additionalProperties;
    const nextRest = next.kw.additionalProperties;
    if (this.reader && oldRest !== false && nextRest === false) {
      const listed = Object.keys(nextProps);
      const only = listed.length > 0 ? `other than ${listed.map((n) => `\`${n}\``).join(', ')}` : 'at all';
      out.add(finding('argument-no-longer-accepted', `no longer accepts properties ${only} (additionalProperties was ${shown(oldRest)}, now false)`), segment.closure);
    } else if (oldRest !== false && nextRest !== false && (isObject(oldRest) || isObject(nextRest))) {
      // Closed result objects are not compared: old callers tolerate added fields.
      out.addTree(segment.additional, this.compare(this.node(oldRest, old), this.node(nextRest, next)));
    }
  }

  // ---- unions ----

  private compareUnions(old: SchemaNode, next: SchemaNode): FindingTree {
    const out = new FindingCollector();
    const [narrow, wide] = this.narrowWide(old, next);
    if (narrow.nullable && !wide.nullable) out.add(this.typeFinding(old, next, ['null'], narrow));
    const oldBranches = this.graph.branchesOf(old);
    const nextBranches = this.graph.branchesOf(next);
    // Places follow old's structure; a branch only next has is placed in next's union.
    const oldStep = (b: SchemaNode): Segment | null =>
      old.branches !== null ? segment.variant(old.unionKeyword ?? 'oneOf', branchLabel(old.branches, b, this.graph)) : null;

    const { pairs, oldLeft, nextLeft } = pairBranches(oldBranches, nextBranches, this.graph);
    for (const [o, n] of pairs) {
      const found = this.compare(o, n);
      if (!found.empty) out.addTree(oldStep(o), found);
    }

    // Unpaired narrow branches must still fit somewhere on the wide side.
    const [needed, otherLeft] = this.narrowWide(oldLeft, nextLeft);
    const offered = this.reader ? nextBranches : oldBranches;
    const fitsInto = (b: SchemaNode, o: SchemaNode): boolean => (this.reader ? this.compare(b, o) : this.compare(o, b)).empty;
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
      const [o, n] = this.narrowWide(unfit[0], candidates[0]);
      out.addTree(oldStep(o), this.compare(o, n));
      return out.done();
    }
    const step = (union: SchemaNode, b: SchemaNode): Segment | null =>
      union.branches !== null ? segment.wholeVariant(union.unionKeyword ?? 'oneOf', branchLabel(union.branches, b, this.graph)) : null;
    // The variant codes need a union on old's side; a union appearing where old had one
    // schema changes the type instead.
    const code: BreakCode = old.branches !== null ? this.codes.variant : 'type-changed';
    for (const b of unfit) {
      const owner = this.reader ? old : next;
      const what = owner.branches !== null ? `variant \`${branchLabel(owner.branches, b, this.graph)}\`` : this.text(b);
      const detail = this.reader ? `no longer accepts ${what} ${this.sides(old, next)}` : `may now be ${what} ${this.sides(old, next)}`;
      out.add(finding(code, detail), step(owner, b));
    }
    return out.done();
  }
}
