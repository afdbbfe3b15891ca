import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '@berm/manifest';
import { asArgument, asEventField, asResult, places } from './breaks/support.js';

/**
 * One schema change, applied both ways: as argument `x` (the new program reads what old
 * callers send) and as result field `x` (old callers read what the new program writes).
 * The expectations are `[code, path below x]`; most changes break one way and not the other.
 */
type Expect = ReadonlyArray<readonly [string, string]>;
interface Case {
  name: string;
  old: JsonSchema;
  next: JsonSchema;
  argument: Expect;
  result: Expect;
}

const int = { type: 'integer' } as const;
const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const uint = (format: string) => ({ type: 'integer', format, minimum: 0 });
const sint = (format: string) => ({ type: 'integer', format });
const obj = (properties: Record<string, JsonSchema>, more: Record<string, unknown> = {}) => ({ type: 'object', properties, ...more });
const circle = obj({ r: num }, { title: 'Circle', required: ['r'] });
const square = obj({ side: num }, { title: 'Square', required: ['side'] });
const triangle = obj({ base: num, height: num }, { title: 'Triangle', required: ['base', 'height'] });

const TYPE = 'type-changed';
const FEWER = 'argument-accepts-fewer-strings';
const MORE = 'result-writes-more-strings';
const NARROWED = 'argument-range-narrowed';
const WIDENED = 'result-range-widened';
const SIGNED = 'unsigned-became-signed';
const ARRAY = 'array-constraint-changed';

const cases: Case[] = [
  // Types
  { name: 'an unchanged schema', old: str, next: { ...str }, argument: [], result: [] },
  { name: 'integer to number', old: int, next: num, argument: [], result: [[TYPE, '']] },
  { name: 'number to integer', old: num, next: int, argument: [[TYPE, '']], result: [] },
  { name: 'type dropped entirely', old: int, next: {}, argument: [], result: [[TYPE, '']] },
  { name: 'type added where there was none', old: {}, next: int, argument: [[TYPE, '']], result: [] },
  { name: 'string to integer', old: str, next: int, argument: [[TYPE, '']], result: [[TYPE, '']] },
  { name: 'one type to two', old: str, next: { type: ['string', 'integer'] }, argument: [], result: [[TYPE, '']] },

  // Nullability, in its three spellings
  { name: 'becoming nullable by type list', old: str, next: { type: ['string', 'null'] }, argument: [], result: [[TYPE, '']] },
  { name: 'becoming nullable by nullable: true', old: str, next: { type: 'string', nullable: true }, argument: [], result: [[TYPE, '']] },
  { name: 'becoming nullable by a null branch', old: str, next: { anyOf: [str, { type: 'null' }] }, argument: [], result: [[TYPE, '']] },
  { name: 'no longer nullable (type list)', old: { type: ['string', 'null'] }, next: str, argument: [[TYPE, '']], result: [] },
  { name: 'no longer nullable (nullable: true)', old: { type: 'string', nullable: true }, next: str, argument: [[TYPE, '']], result: [] },
  { name: 'no longer nullable (null branch)', old: { oneOf: [{ type: 'null' }, str] }, next: str, argument: [[TYPE, '']], result: [] },
  {
    name: 'type list to nullable: true',
    old: { type: ['string', 'null'] },
    next: { type: 'string', nullable: true },
    argument: [],
    result: [],
  },
  {
    name: 'nullable: true to a null branch',
    old: { type: 'string', nullable: true },
    next: { oneOf: [{ type: 'null' }, str] },
    argument: [],
    result: [],
  },
  {
    name: 'a null branch to a type list',
    old: { anyOf: [int, { type: 'null' }] },
    next: { type: ['integer', 'null'] },
    argument: [],
    result: [],
  },

  // Integer formats are ranges: uint8 < uint16 < uint32 < uint64, int8 < … < int64, uint32 ⊂ int64
  { name: 'int32 to int64', old: sint('int32'), next: sint('int64'), argument: [], result: [[WIDENED, '']] },
  { name: 'int64 to int32', old: sint('int64'), next: sint('int32'), argument: [[NARROWED, '']], result: [] },
  { name: 'uint32 to int32', old: uint('uint32'), next: sint('int32'), argument: [[NARROWED, '']], result: [[SIGNED, '']] },
  {
    name: 'uint32 to int64',
    old: uint('uint32'),
    next: sint('int64'),
    argument: [],
    result: [
      [SIGNED, ''],
      [WIDENED, ''],
    ],
  },
  { name: 'uint8 to uint16', old: uint('uint8'), next: uint('uint16'), argument: [], result: [[WIDENED, '']] },
  { name: 'uint64 to uint32', old: uint('uint64'), next: uint('uint32'), argument: [[NARROWED, '']], result: [] },
  { name: 'int8 to int16', old: sint('int8'), next: sint('int16'), argument: [], result: [[WIDENED, '']] },
  { name: 'uint32 without its minimum', old: uint('uint32'), next: sint('uint32'), argument: [], result: [] },

  // Ranges
  { name: 'minimum: 0 removed from an integer', old: { ...int, minimum: 0 }, next: int, argument: [], result: [[SIGNED, '']] },
  {
    name: 'minimum: 0 to exclusiveMinimum: -1 on an integer',
    old: { ...int, minimum: 0 },
    next: { ...int, exclusiveMinimum: -1 },
    argument: [],
    result: [],
  },
  {
    name: 'exclusiveMinimum: -1 to minimum: 0 on an integer',
    old: { ...int, exclusiveMinimum: -1 },
    next: { ...int, minimum: 0 },
    argument: [],
    result: [],
  },
  {
    name: 'minimum: 0 to exclusiveMinimum: 0 on an integer',
    old: { ...int, minimum: 0 },
    next: { ...int, exclusiveMinimum: 0 },
    argument: [[NARROWED, '']],
    result: [],
  },
  { name: 'minimum raised', old: { ...num, minimum: 0 }, next: { ...num, minimum: 1 }, argument: [[NARROWED, '']], result: [] },
  {
    name: 'minimum lowered, still positive',
    old: { ...int, minimum: 5 },
    next: { ...int, minimum: 1 },
    argument: [],
    result: [[WIDENED, '']],
  },
  { name: 'maximum lowered', old: { ...int, maximum: 10 }, next: { ...int, maximum: 5 }, argument: [[NARROWED, '']], result: [] },
  { name: 'maximum raised', old: { ...int, maximum: 10 }, next: { ...int, maximum: 50 }, argument: [], result: [[WIDENED, '']] },
  {
    name: 'maximum made exclusive',
    old: { ...num, maximum: 10 },
    next: { ...num, exclusiveMaximum: 10 },
    argument: [[NARROWED, '']],
    result: [],
  },
  { name: 'multipleOf added', old: num, next: { ...num, multipleOf: 0.5 }, argument: [[NARROWED, '']], result: [] },
  { name: 'multipleOf 2 to 4', old: { ...int, multipleOf: 2 }, next: { ...int, multipleOf: 4 }, argument: [[NARROWED, '']], result: [] },

  // Strings
  { name: 'enum removed entirely', old: { ...str, enum: ['a', 'b'] }, next: str, argument: [], result: [[MORE, '']] },
  { name: 'enum added where there was none', old: str, next: { ...str, enum: ['a', 'b'] }, argument: [[FEWER, '']], result: [] },
  {
    name: 'enum value removed',
    old: { ...str, enum: ['a', 'b', 'c'] },
    next: { ...str, enum: ['a', 'b'] },
    argument: [[FEWER, '']],
    result: [],
  },
  {
    name: 'enum value added',
    old: { ...str, enum: ['a', 'b'] },
    next: { ...str, enum: ['a', 'b', 'c'] },
    argument: [],
    result: [[MORE, '']],
  },
  { name: 'enum values reordered', old: { ...str, enum: ['a', 'b'] }, next: { ...str, enum: ['b', 'a'] }, argument: [], result: [] },
  { name: 'const as a one-value enum', old: { const: 'a' }, next: { ...str, enum: ['a'] }, argument: [], result: [] },
  { name: 'const widened to an enum', old: { const: 'a' }, next: { enum: ['a', 'b'] }, argument: [], result: [[MORE, '']] },
  { name: 'const added', old: str, next: { ...str, const: 'a' }, argument: [[FEWER, '']], result: [] },
  // Enum values of any type count as strings: the code names the common case.
  {
    name: 'integer enum value removed',
    old: { ...int, enum: [1, 2, 3] },
    next: { ...int, enum: [1, 2] },
    argument: [[FEWER, '']],
    result: [],
  },
  { name: 'maxLength raised', old: { ...str, maxLength: 10 }, next: { ...str, maxLength: 20 }, argument: [], result: [[MORE, '']] },
  { name: 'maxLength removed', old: { ...str, maxLength: 10 }, next: str, argument: [], result: [[MORE, '']] },
  { name: 'maxLength lowered', old: { ...str, maxLength: 10 }, next: { ...str, maxLength: 5 }, argument: [[FEWER, '']], result: [] },
  { name: 'minLength raised', old: { ...str, minLength: 1 }, next: { ...str, minLength: 3 }, argument: [[FEWER, '']], result: [] },
  { name: 'minLength lowered', old: { ...str, minLength: 3 }, next: { ...str, minLength: 1 }, argument: [], result: [[MORE, '']] },
  { name: 'pattern added', old: str, next: { ...str, pattern: '^[a-z]+$' }, argument: [[FEWER, '']], result: [] },
  {
    name: 'pattern changed',
    old: { ...str, pattern: '^[a-z]+$' },
    next: { ...str, pattern: '^[a-z0-9]+$' },
    argument: [[FEWER, '']],
    result: [[MORE, '']],
  },
  { name: 'pattern removed', old: { ...str, pattern: '^[a-z]+$' }, next: str, argument: [], result: [[MORE, '']] },
  { name: 'format added', old: str, next: { ...str, format: 'date-time' }, argument: [[FEWER, '']], result: [] },
  {
    name: 'format changed',
    old: { ...str, format: 'date' },
    next: { ...str, format: 'date-time' },
    argument: [[FEWER, '']],
    result: [[MORE, '']],
  },
  { name: 'format removed', old: { ...str, format: 'email' }, next: str, argument: [], result: [[MORE, '']] },
  {
    name: 'enum values still within a new maxLength',
    old: { ...str, enum: ['ab', 'cd'] },
    next: { ...str, maxLength: 2 },
    argument: [],
    result: [[MORE, '']],
  },
  {
    name: 'an enum value outside a new pattern',
    old: { ...str, enum: ['a1', 'b2'] },
    next: { ...str, enum: ['a1', 'b2'], pattern: '^a' },
    argument: [[FEWER, '']],
    result: [],
  },

  // Objects
  {
    name: 'additionalProperties: false closing',
    old: obj({ a: str }),
    next: obj({ a: str }, { additionalProperties: false }),
    argument: [['argument-no-longer-accepted', '/additionalProperties']],
    result: [],
  },
  {
    name: 'additionalProperties: false opening',
    old: obj({ a: str }, { additionalProperties: false }),
    next: obj({ a: str }),
    argument: [],
    result: [],
  },
  {
    name: 'a property removed from a closed object',
    old: obj({ a: str, b: str }, { additionalProperties: false }),
    next: obj({ a: str }, { additionalProperties: false }),
    argument: [['argument-no-longer-accepted', '/properties/b']],
    result: [],
  },
  {
    name: 'an optional property removed from an open object',
    old: obj({ a: str, b: str }),
    next: obj({ a: str }),
    argument: [],
    result: [],
  },
  {
    name: 'a nested property newly required',
    old: obj({ a: str }),
    next: obj({ a: str }, { required: ['a'] }),
    argument: [['argument-newly-required', '/properties/a']],
    result: [],
  },
  {
    name: 'a nested property no longer required',
    old: obj({ a: str }, { required: ['a'] }),
    next: obj({ a: str }),
    argument: [],
    result: [['field-no-longer-always-present', '/properties/a']],
  },
  {
    name: 'a required nested property removed',
    old: obj({ a: str }, { required: ['a'] }),
    next: obj({}),
    argument: [],
    result: [['field-no-longer-always-present', '/properties/a']],
  },
  {
    name: 'a nested property integer to number',
    old: obj({ a: int }),
    next: obj({ a: num }),
    argument: [],
    result: [[TYPE, '/properties/a']],
  },
  {
    name: 'map values integer to number',
    old: { type: 'object', additionalProperties: int },
    next: { type: 'object', additionalProperties: num },
    argument: [],
    result: [[TYPE, '/additionalProperties']],
  },
  {
    name: 'map values constrained',
    old: { type: 'object' },
    next: { type: 'object', additionalProperties: str },
    argument: [[TYPE, '/additionalProperties']],
    result: [],
  },
  {
    name: 'a property listed under a map',
    old: { type: 'object', additionalProperties: num },
    next: { ...obj({ a: int }), additionalProperties: num },
    argument: [[TYPE, '/properties/a']],
    result: [],
  },
  {
    name: 'a property schema becoming false',
    old: obj({ a: str }),
    next: obj({ a: false }),
    argument: [['argument-no-longer-accepted', '/properties/a']],
    result: [],
  },

  // Arrays
  {
    name: 'items integer to number',
    old: { type: 'array', items: int },
    next: { type: 'array', items: num },
    argument: [],
    result: [[TYPE, '/items']],
  },
  {
    name: 'minItems raised',
    old: { type: 'array', items: str },
    next: { type: 'array', items: str, minItems: 1 },
    argument: [[ARRAY, '']],
    result: [],
  },
  {
    name: 'maxItems raised',
    old: { type: 'array', items: str, maxItems: 3 },
    next: { type: 'array', items: str, maxItems: 5 },
    argument: [],
    result: [[ARRAY, '']],
  },
  {
    name: 'maxItems removed',
    old: { type: 'array', items: str, maxItems: 3 },
    next: { type: 'array', items: str },
    argument: [],
    result: [[ARRAY, '']],
  },
  {
    name: 'uniqueItems added',
    old: { type: 'array', items: str },
    next: { type: 'array', items: str, uniqueItems: true },
    argument: [[ARRAY, '']],
    result: [],
  },
  {
    name: 'a closed tuple grows',
    old: { type: 'array', prefixItems: [int, str], items: false },
    next: { type: 'array', prefixItems: [int, str, str], items: false },
    argument: [],
    result: [[ARRAY, '']],
  },
  {
    name: 'a tuple element changes type',
    old: { type: 'array', prefixItems: [int, str], items: false },
    next: { type: 'array', prefixItems: [int, int], items: false },
    argument: [[TYPE, '/prefixItems/1']],
    result: [[TYPE, '/prefixItems/1']],
  },
  {
    name: 'a draft-7 tuple rewritten with prefixItems',
    old: { type: 'array', items: [int, str], additionalItems: false },
    next: { type: 'array', prefixItems: [int, str], items: false },
    argument: [],
    result: [],
  },

  // Boolean schemas
  { name: 'true to false', old: true, next: false, argument: [['argument-no-longer-accepted', '']], result: [] },
  { name: 'false to true', old: false, next: true, argument: [], result: [[TYPE, '']] },
  { name: 'a string to true', old: str, next: true, argument: [], result: [[TYPE, '']] },

  // Unions
  {
    name: 'a variant removed',
    old: { oneOf: [circle, square] },
    next: { oneOf: [circle] },
    argument: [['variant-removed', '/oneOf/Square']],
    result: [],
  },
  {
    name: 'a variant added',
    old: { oneOf: [circle, square] },
    next: { oneOf: [circle, square, triangle] },
    argument: [],
    result: [['variant-added', '/oneOf/Triangle']],
  },
  { name: 'variants reordered', old: { oneOf: [circle, square] }, next: { oneOf: [square, circle] }, argument: [], result: [] },
  {
    name: 'a field inside a reordered variant',
    old: { anyOf: [circle, square] },
    next: { anyOf: [square, obj({ r: int }, { title: 'Circle', required: ['r'] })] },
    argument: [[TYPE, '/anyOf/Circle/properties/r']],
    result: [],
  },
  {
    name: 'a type list to a union of the same types',
    old: { type: ['string', 'integer'] },
    next: { oneOf: [str, int] },
    argument: [],
    result: [],
  },
];

function expected(base: string, list: Expect) {
  return list.map(([code, path]) => ({ code, path: base + path }));
}

describe('breaks: one schema change, both directions', () => {
  for (const c of cases) {
    it(c.name, () => {
      const argument = asArgument(c.old, c.next);
      const result = asResult(c.old, c.next);
      const event = asEventField(c.old, c.next);
      expect(places(argument), 'as an argument').toEqual(expected('/arguments/properties/x', c.argument));
      expect(places(result), 'as a result').toEqual(expected('/returns/properties/x', c.result));
      // Events are read by old callers exactly as results are.
      expect(places(event), 'as an event field').toEqual(expected('/fields/properties/x', c.result));
      for (const b of [...argument, ...result]) {
        expect(b.tool).toBe('t');
        expect(b.event).toBeUndefined();
        expect(b.message).not.toMatch(/[\r\n]/);
        expect(b.message).toContain('tool `t`');
        expect(b.message).toMatch(/`x[`.[<]/);
      }
      for (const b of event) {
        expect(b.event).toBe('e');
        expect(b.message).toContain('event `e`');
      }
    });
  }
});
