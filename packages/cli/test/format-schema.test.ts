import { describe, expect, it } from 'vitest';
import { renderArguments, renderSchema } from '@berm/cli';

describe('renderSchema', () => {
  it('renders scalars, ranges and string formats', () => {
    expect(renderSchema({ type: 'string' })).toBe('string');
    expect(renderSchema({ type: 'integer', minimum: 0, format: 'uint32' })).toBe('integer ≥0');
    expect(renderSchema({ type: 'number', exclusiveMinimum: 0, maximum: 1 })).toBe('number >0 ≤1');
    expect(renderSchema({ type: 'string', format: 'date-time' })).toBe('string(date-time)');
    expect(renderSchema(true)).toBe('any');
    expect(renderSchema({})).toBe('any');
    expect(renderSchema(false)).toBe('never');
  });

  it('renders a titled object with its fields, optional ones marked', () => {
    const schema = {
      type: 'object',
      title: 'Forecast',
      properties: { high: { type: 'number' }, low: { type: 'number' }, note: { type: 'string' } },
      required: ['high', 'low'],
    };
    expect(renderSchema(schema)).toBe('Forecast{high: number, low: number, note?: string}');
  });

  it('renders arrays, enums, consts, unions and nullables', () => {
    expect(renderSchema({ type: 'array', items: { type: 'string' } })).toBe('string[]');
    expect(renderSchema({ type: 'array' })).toBe('any[]');
    expect(renderSchema({ type: 'string', enum: ['low', 'high'] })).toBe('"low"|"high"');
    expect(renderSchema({ type: 'array', items: { enum: ['a', 'b'] } })).toBe('("a"|"b")[]');
    expect(renderSchema({ const: 3 })).toBe('3');
    expect(renderSchema({ type: ['string', 'null'] })).toBe('string | null');
    expect(renderSchema({ oneOf: [{ type: 'string' }, { type: 'integer' }] })).toBe('string | integer');
    expect(renderSchema({ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'null' }] } })).toBe('(string | null)[]');
    expect(renderSchema({ prefixItems: [{ type: 'string' }, { type: 'number' }] })).toBe('[string, number]');
    expect(renderSchema({ type: 'object', additionalProperties: { type: 'integer' } })).toBe('{[key: string]: integer}');
  });

  it('shortens long enums', () => {
    const values = Array.from({ length: 10 }, (_, i) => `v${i}`);
    expect(renderSchema({ enum: values })).toBe('"v0"|"v1"|"v2"|"v3"|"v4"|"v5"|"v6"|"v7"|…2 more');
  });

  it('follows local $refs into $defs and definitions, naming untitled objects after the ref', () => {
    const schema = {
      $ref: '#/$defs/Forecast',
      $defs: {
        Forecast: { type: 'object', properties: { days: { type: 'array', items: { $ref: '#/definitions/Day' } } }, required: ['days'] },
      },
      definitions: { Day: { type: 'object', title: 'Day', properties: { high: { type: 'number' } }, required: ['high'] } },
    };
    expect(renderSchema(schema)).toBe('Forecast{days: Day{high: number}[]}');
  });

  it('shows objects nested past two levels by name only', () => {
    const inner = { type: 'object', title: 'Inner', properties: { x: { type: 'integer' } } };
    const middle = { type: 'object', title: 'Middle', properties: { inner } };
    const outer = { type: 'object', title: 'Outer', properties: { middle } };
    expect(renderSchema(outer)).toBe('Outer{middle?: Middle{inner?: Inner}}');
  });

  it('stops at a cyclic $ref and names it', () => {
    const schema = {
      $ref: '#/$defs/Node',
      $defs: { Node: { type: 'object', properties: { next: { anyOf: [{ $ref: '#/$defs/Node' }, { type: 'null' }] } } } },
    };
    expect(renderSchema(schema)).toBe('Node{next?: Node | null}');
  });

  it('shows an unresolvable ref by its last segment', () => {
    expect(renderSchema({ $ref: '#/$defs/Missing' })).toBe('Missing');
    expect(renderSchema({ $ref: 'https://example.com/schemas/Thing' })).toBe('Thing');
  });
});

describe('renderArguments', () => {
  it('lists the properties of an arguments object', () => {
    const args = {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 0 } },
      required: ['city'],
    };
    expect(renderArguments(args)).toBe('city: string, days?: integer ≥0');
  });

  it('is empty for an object without properties', () => {
    expect(renderArguments({ type: 'object' })).toBe('');
    expect(renderArguments({ type: 'object', additionalProperties: false })).toBe('');
  });

  it('follows a top-level $ref to the arguments object', () => {
    const args = { $ref: '#/$defs/Args', $defs: { Args: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } };
    expect(renderArguments(args)).toBe('q: string');
  });

  it('renders anything else as a type', () => {
    expect(renderArguments({ type: 'object', additionalProperties: { type: 'string' } })).toBe('{[key: string]: string}');
    expect(renderArguments(true)).toBe('any');
  });
});
