import { describe, expect, it } from 'vitest';
import { breaks, type JsonSchema } from '@berm/manifest';
import { manifest, places, tool } from './support.js';

/** The breaks of `old` → `next` used as both the arguments and the result of tool `t`. */
function both(old: JsonSchema, next: JsonSchema) {
  return places(
    breaks(
      manifest({ tools: [tool('t', { arguments: old, returns: old })] }),
      manifest({ tools: [tool('t', { arguments: next, returns: next })] }),
    ),
  );
}

const point = { type: 'object', title: 'Point', properties: { x: { type: 'integer' }, y: { type: 'integer' } }, required: ['x', 'y'] };

describe('breaks: local references', () => {
  it('moving an inline schema into $defs reports nothing, either way and in both directions', () => {
    const inline = { type: 'object', properties: { from: point, to: point }, required: ['from'] };
    const refs = {
      type: 'object',
      properties: { from: { $ref: '#/$defs/Point' }, to: { $ref: '#/$defs/Point', description: 'Where it ends.' } },
      required: ['from'],
      $defs: { Point: point },
    };
    expect(both(inline, refs)).toEqual([]);
    expect(both(refs, inline)).toEqual([]);
  });

  it('$defs and definitions are read alike', () => {
    const withDefs = { type: 'object', properties: { p: { $ref: '#/$defs/Point' } }, $defs: { Point: point } };
    const withDefinitions = { type: 'object', properties: { p: { $ref: '#/definitions/Point' } }, definitions: { Point: point } };
    expect(both(withDefs, withDefinitions)).toEqual([]);
  });

  it('a reference wrapped in allOf, as older generators write it, is the referenced schema', () => {
    const plain = { type: 'object', properties: { p: { $ref: '#/$defs/Point' } }, $defs: { Point: point } };
    const wrapped = {
      type: 'object',
      properties: { p: { allOf: [{ $ref: '#/$defs/Point' }], description: 'A point.' } },
      $defs: { Point: point },
    };
    expect(both(plain, wrapped)).toEqual([]);
  });

  it('allOf members are folded into one schema', () => {
    const split = {
      allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'integer' } } }],
    };
    const flat = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['a'] };
    expect(both(split, flat)).toEqual([]);
    const tighter = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer', minimum: 1 } }, required: ['a'] };
    expect(both(split, tighter)).toEqual([{ code: 'argument-range-narrowed', path: '/arguments/properties/b' }]);
  });

  it('a change behind a reference is found, at the place that uses it', () => {
    const old = { type: 'object', properties: { p: { $ref: '#/$defs/Point' } }, $defs: { Point: point } };
    const next = {
      type: 'object',
      properties: { p: { $ref: '#/$defs/Point' } },
      $defs: { Point: { ...point, properties: { ...point.properties, x: { type: 'number' } } } },
    };
    expect(both(old, next)).toEqual([{ code: 'type-changed', path: '/returns/properties/p/properties/x' }]);
  });

  it('a shared definition that changed is reported at every place that uses it', () => {
    const args = (defs: object) => ({
      type: 'object',
      properties: { from: { $ref: '#/$defs/Point' }, to: { $ref: '#/$defs/Point' } },
      $defs: defs,
    });
    const loose = { ...point, required: ['x'] };
    expect(both(args({ Point: loose }), args({ Point: point }))).toEqual([
      { code: 'argument-newly-required', path: '/arguments/properties/from/properties/y' },
      { code: 'argument-newly-required', path: '/arguments/properties/to/properties/y' },
    ]);
  });

  it('JSON pointer escapes ~0 and ~1 and percent-encoding are unescaped', () => {
    const defs = { 'a/b': { type: 'integer' }, 'm~n': { type: 'string' }, 'with space': { type: 'boolean' } };
    const old = {
      type: 'object',
      properties: { s: { $ref: '#/$defs/a~1b' }, t: { $ref: '#/$defs/m~0n' }, u: { $ref: '#/$defs/with%20space' } },
      $defs: defs,
    };
    const inline = { type: 'object', properties: { s: { type: 'integer' }, t: { type: 'string' }, u: { type: 'boolean' } } };
    expect(both(old, inline)).toEqual([]);
    const changed = { type: 'object', properties: { s: { type: 'number' }, t: { type: 'string' }, u: { type: 'boolean' } } };
    expect(both(old, changed)).toEqual([{ code: 'type-changed', path: '/returns/properties/s' }]);
  });

  it('property names with / and ~ are escaped in paths', () => {
    const old = { type: 'object', properties: { 'a/b~c': { type: 'string' } } };
    const next = { type: 'object', properties: { 'a/b~c': { type: 'string' } }, required: ['a/b~c'] };
    expect(both(old, next)).toEqual([{ code: 'argument-newly-required', path: '/arguments/properties/a~1b~0c' }]);
  });

  it('references that cannot be followed constrain nothing and throw nothing', () => {
    const external = { type: 'object', properties: { p: { $ref: 'https://example.com/point.json' }, q: { $ref: '#/$defs/Missing' } } };
    const other = { type: 'object', properties: { p: { $ref: 'https://example.com/other.json' }, q: { type: 'string' } } };
    expect(both(external, external)).toEqual([]);
    expect(both(external, other)).toEqual([{ code: 'type-changed', path: '/arguments/properties/q' }]);
  });

  it('a loop of bare references terminates and reads as any value', () => {
    const loop = {
      type: 'object',
      properties: { p: { $ref: '#/$defs/A' } },
      $defs: { A: { $ref: '#/$defs/B' }, B: { $ref: '#/$defs/A' } },
    };
    const allOfLoop = {
      type: 'object',
      properties: { p: { $ref: '#/$defs/A' } },
      $defs: { A: { allOf: [{ $ref: '#/$defs/B' }] }, B: { allOf: [{ $ref: '#/$defs/A' }] } },
    };
    expect(both(loop, loop)).toEqual([]);
    expect(both(loop, allOfLoop)).toEqual([]);
    expect(both(loop, { type: 'object', properties: { p: { type: 'string' } } })).toEqual([
      { code: 'type-changed', path: '/arguments/properties/p' },
    ]);
  });
});

describe('breaks: recursive schemas', () => {
  const tree = (value: JsonSchema) => ({
    $ref: '#/$defs/Tree',
    $defs: {
      Tree: {
        type: 'object',
        title: 'Tree',
        properties: { value, children: { type: 'array', items: { $ref: '#/$defs/Tree' } } },
        required: ['value', 'children'],
      },
    },
  });

  it('an unchanged recursive schema terminates with nothing', () => {
    expect(both(tree({ type: 'integer' }), tree({ type: 'integer' }))).toEqual([]);
  });

  it('a change in a recursive type is reported once, where the recursion starts', () => {
    expect(both(tree({ type: 'integer' }), tree({ type: 'number' }))).toEqual([
      { code: 'type-changed', path: '/returns/properties/value' },
    ]);
    expect(both(tree({ type: 'number' }), tree({ type: 'integer' }))).toEqual([
      { code: 'type-changed', path: '/arguments/properties/value' },
    ]);
  });

  it('a recursive type behind a nullable reference (a linked list) is reported once', () => {
    const list = (id: JsonSchema) => ({
      type: 'object',
      properties: { head: { $ref: '#/$defs/Node' } },
      required: ['head'],
      $defs: {
        Node: {
          type: 'object',
          title: 'Node',
          properties: { id, next: { anyOf: [{ $ref: '#/$defs/Node' }, { type: 'null' }] } },
          required: ['id'],
        },
      },
    });
    expect(both(list({ type: 'integer', format: 'uint32', minimum: 0 }), list({ type: 'integer', format: 'int32' }))).toEqual([
      { code: 'argument-range-narrowed', path: '/arguments/properties/head/properties/id' },
      { code: 'unsigned-became-signed', path: '/returns/properties/head/properties/id' },
    ]);
  });

  it('mutually recursive definitions terminate', () => {
    const pair = (leaf: JsonSchema) => ({
      $ref: '#/$defs/A',
      $defs: {
        A: { type: 'object', properties: { b: { $ref: '#/$defs/B' }, leaf } },
        B: { type: 'object', properties: { a: { $ref: '#/$defs/A' } } },
      },
    });
    expect(both(pair({ type: 'string' }), pair({ type: 'string' }))).toEqual([]);
    expect(both(pair({ type: 'string' }), pair({ type: 'string', maxLength: 3 }))).toEqual([
      { code: 'argument-accepts-fewer-strings', path: '/arguments/properties/leaf' },
    ]);
  });

  it('definitions reachable by exponentially many paths stay linear to compare and bounded to list', () => {
    // D0 has two fields of D1, D1 two of D2, …: 2^40 paths to D40.
    const chain = (leaf: JsonSchema) => {
      const defs: Record<string, JsonSchema> = { D40: { type: 'object', properties: { leaf }, required: ['leaf'] } };
      for (let i = 39; i >= 0; i--) {
        defs[`D${i}`] = { type: 'object', properties: { l: { $ref: `#/$defs/D${i + 1}` }, r: { $ref: `#/$defs/D${i + 1}` } } };
      }
      return { $ref: '#/$defs/D0', $defs: defs };
    };
    const found = breaks(
      manifest({ tools: [tool('t', { returns: chain({ type: 'integer' }) })] }),
      manifest({ tools: [tool('t', { returns: chain({ type: 'number' }) })] }),
    );
    // Every use site while the list is short, then each shared definition once more: far fewer than 2^40.
    expect(found.length).toBeGreaterThanOrEqual(1000);
    expect(found.length).toBeLessThan(1100);
    expect(new Set(found.map((b) => b.code))).toEqual(new Set(['type-changed']));
    expect(found[0].path).toBe(`/returns${'/properties/l'.repeat(40)}/properties/leaf`);
  });
});
