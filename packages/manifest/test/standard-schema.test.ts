import { describe, expect, it } from 'vitest';
import { type JsonSchema, Manifest, standardSchema } from '@berm/manifest';

const SAFE = Number.MAX_SAFE_INTEGER;

describe('standardSchema', () => {
  it('writes each integer format as the range it means', () => {
    const cases: Array<[string, { minimum?: number; maximum?: number }]> = [
      ['int8', { minimum: -128, maximum: 127 }],
      ['uint8', { minimum: 0, maximum: 255 }],
      ['int16', { minimum: -32768, maximum: 32767 }],
      ['uint16', { minimum: 0, maximum: 65535 }],
      ['int32', { minimum: -2147483648, maximum: 2147483647 }],
      ['uint32', { minimum: 0, maximum: 4294967295 }],
      // Past what a double holds exactly: the safe integers.
      ['int64', { minimum: -SAFE, maximum: SAFE }],
      ['uint64', { minimum: 0, maximum: SAFE }],
      ['int128', { minimum: -SAFE, maximum: SAFE }],
      ['uint128', { minimum: 0, maximum: SAFE }],
      // usize: only the sign is certain; isize: nothing.
      ['uint', { minimum: 0 }],
      ['int', {}],
    ];
    for (const [format, range] of cases) {
      expect(standardSchema({ type: 'integer', format }), format).toEqual({ type: 'integer', ...range });
    }
  });

  it('writes float as an f32 range and leaves double out, on number schemas', () => {
    expect(standardSchema({ type: 'number', format: 'float' })).toEqual({
      type: 'number',
      minimum: -3.4028234663852886e38,
      maximum: 3.4028234663852886e38,
    });
    expect(standardSchema({ type: 'number', format: 'double' })).toEqual({ type: 'number' });
  });

  it('keeps a bound already tighter than the format, and replaces a looser one', () => {
    expect(standardSchema({ type: 'integer', format: 'uint8', minimum: 1, maximum: 1000 })).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 255,
    });
    expect(standardSchema({ type: 'integer', format: 'uint32', minimum: -5, exclusiveMaximum: 10 })).toEqual({
      type: 'integer',
      minimum: 0,
      exclusiveMaximum: 10,
    });
    expect(standardSchema({ type: ['integer', 'null'], format: 'int8' })).toEqual({
      type: ['integer', 'null'],
      minimum: -128,
      maximum: 127,
    });
  });

  it('keeps the formats JSON Schema defines, leaves out the others, and bounds no string', () => {
    expect(standardSchema({ type: 'string', format: 'date-time' })).toEqual({ type: 'string', format: 'date-time' });
    expect(standardSchema({ type: 'string', format: 'uuid' })).toEqual({ type: 'string', format: 'uuid' });
    expect(standardSchema({ type: 'string', format: 'phone' })).toEqual({ type: 'string' });
    // A 64-bit integer carried as a string (as some generators write it) keeps its type and gets no range.
    expect(standardSchema({ type: 'string', format: 'int64' })).toEqual({ type: 'string' });
  });

  it('rewrites every place a schema sits, and nothing that is data or a name', () => {
    const n = { type: 'integer', format: 'uint16' };
    const r = { type: 'integer', minimum: 0, maximum: 65535 };
    const schema: JsonSchema = {
      type: 'object',
      properties: { format: n, nested: { type: 'object', properties: { deep: n } } },
      patternProperties: { '^x': n },
      additionalProperties: n,
      $defs: { counter: n },
      definitions: { old: n },
      items: n,
      prefixItems: [n, { type: 'string' }],
      allOf: [n],
      anyOf: [n, true],
      oneOf: [n],
      not: n,
      if: n,
      // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword
      then: n,
      else: n,
      contains: n,
      dependentSchemas: { a: n },
      dependencies: { b: ['a'], c: n },
      const: { format: 'uint8' },
      enum: [{ format: 'uint8' }],
      default: { format: 'uint8' },
      examples: [{ format: 'uint8' }],
      required: ['format'],
    };
    expect(standardSchema(schema)).toEqual({
      type: 'object',
      properties: { format: r, nested: { type: 'object', properties: { deep: r } } },
      patternProperties: { '^x': r },
      additionalProperties: r,
      $defs: { counter: r },
      definitions: { old: r },
      items: r,
      prefixItems: [r, { type: 'string' }],
      allOf: [r],
      anyOf: [r, true],
      oneOf: [r],
      not: r,
      if: r,
      // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword
      then: r,
      else: r,
      contains: r,
      dependentSchemas: { a: r },
      dependencies: { b: ['a'], c: r },
      const: { format: 'uint8' },
      enum: [{ format: 'uint8' }],
      default: { format: 'uint8' },
      examples: [{ format: 'uint8' }],
      required: ['format'],
    });
  });

  it('leaves out x-mcp-header wherever a schema sits, so no client is asked to mirror an argument into a header', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        // Not a tool argument a client could mirror, and not a rule the transport allows: left out too.
        nested: { type: 'array', items: { type: 'integer', format: 'uint8', 'x-mcp-header': 'Bad Name' } },
        // Data that merely looks like the keyword stays.
        fixed: { const: { 'x-mcp-header': 'kept' } },
      },
      'x-mcp-header': 'Whole',
      'x-berm-note': 'an unknown keyword stays',
    };
    expect(standardSchema(schema)).toEqual({
      type: 'object',
      properties: {
        region: { type: 'string' },
        nested: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 } },
        fixed: { const: { 'x-mcp-header': 'kept' } },
      },
      'x-berm-note': 'an unknown keyword stays',
    });
    expect((schema.properties as Record<string, JsonSchema>).region).toEqual({ type: 'string', 'x-mcp-header': 'Region' });
  });

  it('never changes its argument, and gives back the parts it had nothing to change', () => {
    const untouched = { type: 'object', properties: { s: { type: 'string' } } };
    const schema = { type: 'object', properties: { n: { type: 'integer', format: 'uint8' }, other: untouched } };
    const copy = structuredClone(schema);
    const out = standardSchema(schema) as { properties: { other: unknown } };
    expect(schema).toEqual(copy);
    expect(out.properties.other).toBe(untouched);
    expect(standardSchema(untouched)).toBe(untouched);
    expect(standardSchema(true)).toBe(true);
  });

  it('leaves the manifest and what breaks compares with the formats as written', () => {
    const manifest = Manifest.fromJSON({
      abi_version: 1,
      name: 'p',
      tools: [{ name: 't', description: 'd', arguments: { type: 'object', properties: { n: { type: 'integer', format: 'uint8' } } } }],
    });
    const args = manifest.data.tools[0]!.arguments as { properties: { n: unknown } };
    standardSchema(args);
    expect(args.properties.n).toEqual({ type: 'integer', format: 'uint8' });
  });
});
