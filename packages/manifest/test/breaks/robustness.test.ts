import { describe, expect, it } from 'vitest';
import { BREAK_CODES, breaks, isManifestError, type Break, type JsonSchema, type ManifestData } from '@berm/manifest';
import { manifest, tool } from './support.js';
import { seededRandom as random } from '../../../../test/helpers/random.js';

function withResult(returns: JsonSchema): ManifestData {
  return manifest({ tools: [tool('t', { returns })] });
}

/** Definitions D0 → D1 → … → D(n-1), each reaching the next as `kind` says, the last holding `leaf`. */
function chain(n: number, kind: 'property' | 'allOf' | 'bare', leaf: JsonSchema): JsonSchema {
  const defs: Record<string, JsonSchema> = {};
  for (let i = 0; i < n; i++) {
    const next = i + 1 < n ? { $ref: `#/$defs/D${i + 1}` } : leaf;
    defs[`D${i}`] = kind === 'property' ? { type: 'object', properties: { next } } : kind === 'allOf' ? { allOf: [next] } : next;
  }
  return { $ref: '#/$defs/D0', $defs: defs };
}

describe('breaks: schemas chained deeper than can be compared', () => {
  for (const kind of ['property', 'allOf', 'bare'] as const) {
    it(`a chain of ${kind} references is refused with a typed error naming the schema`, () => {
      let error: unknown;
      try {
        breaks(withResult(chain(5000, kind, { type: 'integer' })), withResult(chain(5000, kind, { type: 'number' })));
      } catch (e) {
        error = e;
      }
      expect(isManifestError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'invalid-manifest', path: '/tools/0/returns' });
      expect((error as Error).message).toContain('/tools/0/returns');
    });
  }

  it('a chain of a hundred definitions is compared', () => {
    const found = breaks(withResult(chain(100, 'property', { type: 'integer' })), withResult(chain(100, 'property', { type: 'number' })));
    expect(found.map((b) => [b.code, b.path])).toEqual([['type-changed', `/returns${'/properties/next'.repeat(100)}`]]);
  });
});

const TYPES = ['null', 'boolean', 'object', 'array', 'number', 'integer', 'string', 'bogus'];
const FORMATS = ['int32', 'uint32', 'int64', 'uint8', 'uint', 'float', 'double', 'date-time', 'email', 'nope'];
const REFS = [
  '#/$defs/A',
  '#/$defs/B',
  '#',
  '#/properties/a',
  '#/$defs/A/properties/a~1b',
  'https://example.com/x.json',
  '#/$defs/missing',
  '#%zz',
  '#/items/0',
];
const NAMES = ['a', 'b', 'a/b', 'm~n', 'kind', ''];

/**
 * Schemas that are often wrong in the ways hand-written ones are: keywords of the wrong type,
 * dangling and looping references, unreadable patterns, contradictory bounds.
 */
function schemaMaker(rand: () => number) {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)];
  const chance = (p: number) => rand() < p;
  const value = (): unknown => pick([null, true, 0, -1, 1.5, 'a', 'b', '', [], {}, [1, 'a'], { k: 1 }]);
  const make = (depth: number): unknown => {
    if (depth <= 0 || chance(0.1)) return pick([true, false, {}, { type: pick(TYPES) }]);
    const s: Record<string, unknown> = {};
    if (chance(0.7)) s.type = chance(0.8) ? pick(TYPES) : [pick(TYPES), pick(TYPES)];
    if (chance(0.15)) s.enum = chance(0.9) ? Array.from({ length: Math.floor(rand() * 4) }, value) : 'not a list';
    if (chance(0.1)) s.const = value();
    if (chance(0.1)) s.nullable = chance(0.8) ? true : 'yes';
    if (chance(0.3))
      s.properties = Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, () => [pick(NAMES), make(depth - 1)]));
    if (chance(0.2)) s.required = chance(0.9) ? [pick(NAMES), pick(NAMES)] : [7, null];
    if (chance(0.2)) s.additionalProperties = chance(0.5) ? chance(0.5) : make(depth - 1);
    if (chance(0.1)) s.patternProperties = { [pick(['^a', '(', 'b$'])]: make(depth - 1) };
    if (chance(0.2)) s.items = chance(0.7) ? make(depth - 1) : chance(0.5) ? [make(depth - 1), make(depth - 1)] : 5;
    if (chance(0.1)) s.prefixItems = [make(depth - 1)];
    if (chance(0.1)) s.additionalItems = make(depth - 1);
    if (chance(0.2))
      s[pick(['oneOf', 'anyOf', 'allOf'])] = chance(0.9) ? Array.from({ length: 1 + Math.floor(rand() * 3) }, () => make(depth - 1)) : 'x';
    if (chance(0.2)) s.$ref = chance(0.9) ? pick(REFS) : 42;
    if (chance(0.2))
      s[pick(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])] = chance(0.8)
        ? pick([-1, 0, 1, 2.5, 1e300])
        : pick([true, 'x']);
    if (chance(0.1)) s.multipleOf = pick([0, -2, 0.1, 3, 'x']);
    if (chance(0.15)) s.format = pick(FORMATS);
    if (chance(0.15)) s[pick(['minLength', 'maxLength', 'minItems', 'maxItems'])] = pick([0, 1, 3, -1, 'x']);
    if (chance(0.1)) s.pattern = pick(['^a', '(', '[a-z]+', '\\p{L}']);
    if (chance(0.05)) s.uniqueItems = true;
    if (chance(0.1)) s.title = pick(['A', 'B', 'Circle\nSquare']);
    return s;
  };
  return (): JsonSchema => {
    const root = make(4);
    if (typeof root !== 'object' || root === null) return root as JsonSchema;
    return { ...root, $defs: { A: make(3), B: make(3), 'a/b': make(2) } } as JsonSchema;
  };
}

function manifestOf(rand: () => number, schema: () => JsonSchema): ManifestData {
  return manifest({
    tools: [tool('t', { arguments: schema(), returns: schema(), query: rand() < 0.5 }), ...(rand() < 0.5 ? [tool('u')] : [])],
    events: rand() < 0.5 ? [{ name: 'e', description: '', fields: schema() }] : [],
  });
}

/** The same manifest with a description added at the root of every schema: equal in meaning, unequal as JSON. */
function annotated(m: ManifestData): ManifestData {
  const mark = (s: JsonSchema | undefined): JsonSchema | undefined =>
    typeof s === 'object' && s !== null ? { ...s, description: 'again' } : s;
  return {
    ...m,
    tools: m.tools.map((t) => ({ ...t, arguments: mark(t.arguments)!, returns: mark(t.returns) })),
    events: m.events.map((e) => ({ ...e, fields: mark(e.fields)! })),
  };
}

function wellFormed(list: Break[]): void {
  for (const b of list) {
    expect(BREAK_CODES).toContain(b.code);
    expect(typeof b.path).toBe('string');
    expect(b.path === '' || /^\/(arguments|returns|fields|query)/.test(b.path)).toBe(true);
    expect(b.message.length).toBeGreaterThan(0);
    expect(b.message).not.toMatch(/[\r\n]/);
    expect((b.tool === undefined) !== (b.event === undefined)).toBe(true);
  }
}

describe('breaks: malformed and random schemas', () => {
  it('never throws, always answers with well-formed breaks, the same answer twice, and nothing against itself', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = random(seed);
      const schema = schemaMaker(rand);
      const old = manifestOf(rand, schema);
      const next = manifestOf(rand, schema);
      let forward: Break[] = [];
      let backward: Break[] = [];
      try {
        forward = breaks(old, next);
        backward = breaks(next, old);
      } catch (e) {
        throw new Error(`seed ${seed}: ${(e as Error).stack}`);
      }
      wellFormed(forward);
      wellFormed(backward);
      expect(breaks(old, next), `seed ${seed}`).toEqual(forward);
      expect(breaks(old, annotated(old)), `seed ${seed}: a schema against itself`).toEqual([]);
      expect(breaks(next, annotated(next)), `seed ${seed}: a schema against itself`).toEqual([]);
    }
  });
});
