import type { BreakCode } from './codes.js';
import { limitText, plural, valuesText, valueText } from './describe.js';
import { finding, type FindingCollector } from './findings.js';
import { canonical, typeAllows, typeOfValue } from './json.js';
import type { SchemaNode } from './nodes.js';
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
import { change, narrowWide, type Walk } from './walk.js';

/** Enums, strings and numbers: what values of the scalar types both sides allow may be. */
export function compareScalars(walk: Walk, old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
  const [narrow, wide] = narrowWide(walk, old, next);
  if (narrow.enumValues !== null) {
    compareListedValues(walk, old, next, out);
  } else if (wide.enumValues !== null) {
    compareNewlyListed(walk, old, next, out);
  } else {
    if (typeAllows(narrow.types, 'string') && typeAllows(wide.types, 'string')) compareStrings(walk, old, next, out);
    if (typeAllows(narrow.types, 'integer') && typeAllows(wide.types, 'integer')) compareNumbers(walk, old, next, out);
  }
}

/** The narrow side lists its values: each must be one the wide side allows. */
function compareListedValues(walk: Walk, old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
  const [narrow, wide] = narrowWide(walk, old, next);
  const unlisted: unknown[] = [];
  const badStrings: string[] = [];
  const badNumbers: number[] = [];
  for (const value of narrow.enumValues ?? []) {
    // A value of a type the wide side lacks is already reported as a type change.
    if (!typeAllows(wide.types, typeOfValue(value))) continue;
    // A listed value the narrow side's own rules exclude is never sent at all.
    if (typeof value === 'string' && !acceptsString(narrow, value)) continue;
    if (typeof value === 'number' && !acceptsNumber(narrow, value)) continue;
    if (wide.enumKeys !== null && !wide.enumKeys.has(canonical(value))) unlisted.push(value);
    else if (typeof value === 'string' && !acceptsString(wide, value)) badStrings.push(value);
    else if (typeof value === 'number' && !acceptsNumber(wide, value)) badNumbers.push(value);
  }
  // Enum values count as strings whatever their type: the code names the common case.
  if (unlisted.length > 0) {
    const values = valuesText(unlisted);
    out.add(
      finding(
        walk.codes.strings,
        walk.reader ? `no longer accepts ${values} ${walk.sides(old, next)}` : `may now be ${values} ${walk.sides(old, next)}`,
      ),
    );
  }
  if (badStrings.length > 0) {
    const values = valuesText(badStrings);
    out.add(
      finding(
        walk.codes.strings,
        walk.reader ? `no longer accepts ${values} (now ${stringRules(next)})` : `may now be ${values} (was ${stringRules(old)})`,
      ),
    );
  }
  if (badNumbers.length > 0) {
    const values = valuesText(badNumbers);
    if (walk.reader) {
      out.add(finding(walk.codes.range, `no longer accepts ${values} (now ${rangeText(rangeOf(next))})`));
    } else {
      const oldRange = rangeOf(old);
      const signFlip = isIntegral(old) && oldRange.lo.value >= 0 && badNumbers.some((v) => v < 0);
      out.add(finding(signFlip ? 'unsigned-became-signed' : walk.codes.range, `may now be ${values} (was ${rangeText(oldRange)})`));
    }
  }
}

/** Only the wide side lists values: the narrow side's are unlimited. */
function compareNewlyListed(walk: Walk, old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
  const [narrow, wide] = narrowWide(walk, old, next);
  let code: BreakCode = 'type-changed';
  if (typeAllows(narrow.types, 'string') && typeAllows(wide.types, 'string')) code = walk.codes.strings;
  else if (typeAllows(narrow.types, 'integer') && typeAllows(wide.types, 'integer')) code = walk.codes.range;
  out.add(
    finding(
      code,
      walk.reader
        ? `now accepts only ${valuesText(next.enumValues ?? [])} (was ${walk.text(old)})`
        : `may now be any ${walk.text(next)} (was ${walk.text(old)})`,
    ),
  );
}

function stringRules(node: SchemaNode): string {
  const rules: string[] = [];
  if (typeof node.kw.minLength === 'number') rules.push(`minLength ${node.kw.minLength}`);
  if (typeof node.kw.maxLength === 'number') rules.push(`maxLength ${node.kw.maxLength}`);
  const pattern = patternOf(node);
  if (pattern !== undefined) rules.push(`pattern ${valueText(pattern)}`);
  return rules.length > 0 ? rules.join(', ') : 'no string rules';
}

function compareStrings(walk: Walk, old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
  const [narrow, wide] = narrowWide(walk, old, next);
  const code = walk.codes.strings;
  if (maxLengthOf(narrow) > maxLengthOf(wide)) {
    out.add(
      finding(
        code,
        walk.reader
          ? `now accepts at most ${limitText(maxLengthOf(next), 'character')} (${change('maxLength', old, next)})`
          : `may now be longer than ${limitText(maxLengthOf(old), 'character')} (${change('maxLength', old, next)})`,
      ),
    );
  }
  if (minLengthOf(narrow) < minLengthOf(wide)) {
    out.add(
      finding(
        code,
        walk.reader
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
        walk.reader
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
        walk.reader
          ? `must now be in format ${valueText(wideFormat)} (${change('format', old, next)})`
          : `may now not be in format ${valueText(wideFormat)} (${change('format', old, next)})`,
      ),
    );
  }
}

function compareNumbers(walk: Walk, old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
  const oldRange = rangeOf(old);
  const nextRange = rangeOf(next);
  if (walk.reader) {
    if (!rangeWithin(oldRange, nextRange)) {
      out.add(finding(walk.codes.range, `accepts a smaller range: ${rangeText(nextRange)} (was ${rangeText(oldRange)})`));
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
      out.add(finding(walk.codes.range, `may now be outside ${rangeText(oldRange)} (now ${rangeText(nextRange)})`));
    }
  }
  const [narrow, wide] = narrowWide(walk, old, next);
  const wideStep = typeof wide.kw.multipleOf === 'number' && wide.kw.multipleOf > 0 ? wide.kw.multipleOf : undefined;
  if (wideStep !== undefined) {
    const narrowStep = stepOf(narrow);
    if (narrowStep === undefined || !isMultipleOf(narrowStep, wideStep)) {
      out.add(
        finding(
          walk.codes.range,
          walk.reader
            ? `now accepts only multiples of ${wideStep} (${change('multipleOf', old, next)})`
            : `may now be a number that is not a multiple of ${wideStep} (${change('multipleOf', old, next)})`,
        ),
      );
    }
  }
}
