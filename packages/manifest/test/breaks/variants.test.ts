import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '@berm/manifest';
import { asArgument, asResult, places } from './support.js';

const num = { type: 'number' };
const str = { type: 'string' };
const int = { type: 'integer' };

/** An internally tagged variant, as serde writes `#[serde(tag = "kind")]`; no title. */
const tagged = (kind: string, properties: Record<string, JsonSchema>, tagStyle: 'const' | 'enum' = 'const') => ({
  type: 'object',
  properties: { kind: tagStyle === 'const' ? { type: 'string', const: kind } : { type: 'string', enum: [kind] }, ...properties },
  required: ['kind', ...Object.keys(properties)],
});

/** An externally tagged variant, as serde writes enums by default: `{"Circle": {...}}`. */
const external = (name: string, body: JsonSchema) => ({
  type: 'object',
  properties: { [name]: body },
  required: [name],
  additionalProperties: false,
});

const circle = { type: 'object', title: 'Circle', properties: { r: num }, required: ['r'] };
const square = { type: 'object', title: 'Square', properties: { side: num }, required: ['side'] };

function both(old: JsonSchema, next: JsonSchema) {
  return { argument: places(asArgument(old, next)), result: places(asResult(old, next)) };
}

const A = '/arguments/properties/x';
const R = '/returns/properties/x';

describe('breaks: oneOf/anyOf branches are paired by name, not position', () => {
  it('by the const of a shared tag property', () => {
    const old = { oneOf: [tagged('a', { n: int }), tagged('b', { s: str })] };
    const next = { oneOf: [tagged('b', { s: str }), tagged('a', { n: num })] };
    expect(both(old, next)).toEqual({ argument: [], result: [{ code: 'type-changed', path: `${R}/oneOf/a/properties/n` }] });
  });

  it('a tag written as a one-value enum pairs with one written as const', () => {
    const old = { oneOf: [tagged('a', { n: int }, 'enum'), tagged('b', { s: str }, 'enum')] };
    const next = { oneOf: [tagged('b', { s: str }), tagged('a', { n: int })] };
    expect(both(old, next)).toEqual({ argument: [], result: [] });
  });

  it('by the single property of an externally tagged variant', () => {
    const old = { oneOf: [external('Circle', circle), external('Square', square)] };
    expect(both(old, { oneOf: [external('Square', square), external('Circle', circle)] })).toEqual({ argument: [], result: [] });
    expect(both(old, { oneOf: [external('Square', square), { type: 'string', const: 'Point' }] })).toEqual({
      argument: [{ code: 'variant-removed', path: `${A}/oneOf/Circle` }],
      result: [{ code: 'variant-added', path: `${R}/oneOf/Point` }],
    });
  });

  it('by the value of a literal branch', () => {
    const old = { oneOf: [{ const: 'a' }, { const: 'b' }, { const: 'c' }] };
    expect(both(old, { oneOf: [{ const: 'c' }, { const: 'a' }, { const: 'b' }] })).toEqual({ argument: [], result: [] });
    expect(both(old, { oneOf: [{ const: 'c' }, { const: 'a' }] })).toEqual({
      argument: [{ code: 'variant-removed', path: `${A}/oneOf/b` }],
      result: [],
    });
  });

  it('by the type of a primitive branch', () => {
    const old = { oneOf: [str, int] };
    const next = { oneOf: [int, { ...str, maxLength: 3 }] };
    expect(both(old, next)).toEqual({ argument: [{ code: 'argument-accepts-fewer-strings', path: `${A}/oneOf/string` }], result: [] });
  });

  it('an integer branch widened to number: safe to read, breaks what is written', () => {
    expect(both({ oneOf: [int, str] }, { oneOf: [str, num] })).toEqual({
      argument: [],
      result: [{ code: 'type-changed', path: `${R}/oneOf/integer` }],
    });
  });

  it('a variant renamed with the same shape breaks nothing', () => {
    const round = { ...circle, title: 'Round' };
    expect(both({ oneOf: [circle, square] }, { oneOf: [square, round] })).toEqual({ argument: [], result: [] });
  });

  it('a branch named only by its type pairs with the one branch of that type', () => {
    const old = { anyOf: [{ type: 'object', properties: { a: str }, required: ['a'] }, str] };
    const next = { anyOf: [str, { type: 'object', properties: { a: str, b: str }, required: ['a', 'b'] }] };
    expect(both(old, next)).toEqual({
      argument: [{ code: 'argument-newly-required', path: `${A}/anyOf/object/properties/b` }],
      result: [],
    });
  });

  it('branches no key tells apart are matched by whether they still fit', () => {
    // Two untitled objects on each side. What old callers sent as `{a, …}` with extra
    // properties fitted the first branch; next closes it and the other branch needs `b`.
    const old = { anyOf: [{ type: 'object', properties: { a: str } }, { type: 'object', properties: { b: str }, required: ['b'] }, str] };
    const next = {
      anyOf: [
        { type: 'object', properties: { a: str }, additionalProperties: false },
        { type: 'object', properties: { b: str }, required: ['b'] },
        str,
      ],
    };
    // The closed branch is the one left over for it, so what changed is said precisely.
    expect(both(old, next)).toEqual({
      argument: [{ code: 'argument-no-longer-accepted', path: `${A}/anyOf/0/additionalProperties` }],
      result: [],
    });
  });
});

describe('breaks: variants removed and added', () => {
  it('a branch an argument accepted is gone; a result may take a new branch', () => {
    expect(both({ oneOf: [circle, square] }, { oneOf: [circle] })).toEqual({
      argument: [{ code: 'variant-removed', path: `${A}/oneOf/Square` }],
      result: [],
    });
    // Old had one schema, not a union: the new shape is a type change, placed at the new branch.
    expect(both({ oneOf: [circle] }, { oneOf: [circle, square] })).toEqual({
      argument: [],
      result: [{ code: 'type-changed', path: `${R}/oneOf/Square` }],
    });
    expect(
      both(
        { oneOf: [circle, square] },
        { anyOf: [square, circle, { ...circle, title: 'Ellipse', properties: { rx: num, ry: num }, required: ['rx', 'ry'] }] },
      ),
    ).toEqual({
      argument: [],
      result: [{ code: 'variant-added', path: `${R}/anyOf/Ellipse` }],
    });
  });

  it('messages name the variant, the place and both sides', () => {
    const [removed, ...moreRemoved] = asArgument({ oneOf: [circle, square] }, { oneOf: [circle] });
    expect(moreRemoved).toEqual([]);
    expect(removed.message).toBe('argument `x` of tool `t` no longer accepts variant `Square` (was Circle|Square, now Circle)');
    const ellipse = { type: 'object', title: 'Ellipse', properties: { rx: num, ry: num }, required: ['rx', 'ry'] };
    const [added, ...moreAdded] = asResult({ oneOf: [circle, square] }, { oneOf: [circle, square, ellipse] });
    expect(moreAdded).toEqual([]);
    expect(added.message).toBe('result field `x` of tool `t` may now be variant `Ellipse` (was Circle|Square, now Circle|Square|Ellipse)');
  });

  it('a new branch shaped like an old one writes nothing old callers cannot read', () => {
    expect(both({ oneOf: [circle, square] }, { oneOf: [circle, square, { ...square, title: 'Rect' }] })).toEqual({
      argument: [],
      result: [],
    });
  });

  it('a union becoming nullable breaks results; losing null breaks arguments', () => {
    const union = { oneOf: [circle, square] };
    const nullable = { oneOf: [circle, { type: 'null' }, square] };
    expect(both(union, nullable)).toEqual({ argument: [], result: [{ code: 'type-changed', path: R }] });
    expect(both(nullable, union)).toEqual({ argument: [{ code: 'type-changed', path: A }], result: [] });
    expect(both(nullable, { anyOf: [square, circle, { type: 'null' }] })).toEqual({ argument: [], result: [] });
  });

  it('a variant removed from a nullable union', () => {
    expect(both({ anyOf: [circle, square, { type: 'null' }] }, { anyOf: [circle, { type: 'null' }] })).toEqual({
      argument: [{ code: 'variant-removed', path: `${A}/anyOf/Square` }],
      result: [],
    });
  });

  it('constraints beside oneOf apply to every branch', () => {
    const shared = { type: 'object', required: ['id'], properties: { id: int }, oneOf: [tagged('a', {}), tagged('b', {})] };
    const spelled = {
      oneOf: [
        { ...tagged('a', {}), properties: { ...tagged('a', {}).properties, id: int }, required: ['kind', 'id'] },
        { ...tagged('b', {}), properties: { ...tagged('b', {}).properties, id: int }, required: ['kind', 'id'] },
      ],
    };
    expect(both(shared, spelled)).toEqual({ argument: [], result: [] });
    const optionalId = { ...shared, required: [] };
    expect(both(shared, optionalId)).toEqual({
      argument: [],
      result: [
        { code: 'field-no-longer-always-present', path: `${R}/oneOf/a/properties/id` },
        { code: 'field-no-longer-always-present', path: `${R}/oneOf/b/properties/id` },
      ],
    });
  });
});
