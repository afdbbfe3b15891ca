// The runtime's check of a schema against the 2020-12 meta-schema (`schemaProblem`) goes through the
// validator the manifest library generates at build; it must answer as ajv's own `validateSchema` with
// the options the runtime used before (its verdict, where, and ajv's words), schemas valid and invalid
// at their root and deep inside, and hand a schema naming another `$schema` to ajv as before.
import Ajv2020Module from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { schemaProblem } from '../dist/runtime/index.js';
import { seededRandom } from '../../../test/helpers/random.js';

type AjvClass = typeof Ajv2020Module.default;
const Ajv2020: AjvClass = (Ajv2020Module as unknown as { default?: AjvClass }).default ?? (Ajv2020Module as unknown as AjvClass);

/** The runtime's checker as it was made before: one instance, the meta-schema compiled on first use. */
const reference = new Ajv2020({ strict: false, validateFormats: false, logger: false, allErrors: false });

/** What ajv's validateSchema says of `schema`, with the options the runtime's checker was made with. */
function ajvSays(schema: unknown): { at: string; message: string } | undefined {
  const ajv = reference;
  if (ajv.validateSchema(schema as object | boolean)) return undefined;
  const issue = ajv.errors?.[0];
  return { at: issue?.instancePath ?? '', message: issue?.message ?? 'rejected by the meta-schema' };
}

const SCHEMAS: Array<[string, unknown]> = [
  ['an object schema', { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }],
  ['true', true],
  ['false', false],
  ['the empty schema', {}],
  ['unknown keywords and formats', { type: 'integer', format: 'uint32', title: 'n', 'x-extra': [1] }],
  ['2020-12 named', { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string' }],
  ['$defs and $ref', { $defs: { n: { type: 'number', minimum: 0 } }, type: 'array', items: { $ref: '#/$defs/n' } }],
  ['prefixItems and unevaluatedProperties', { prefixItems: [{ type: 'string' }], unevaluatedProperties: false }],
  ['a type that is not one', { type: 'text' }],
  ['a type that is a number', { type: 5 }],
  ['properties as an array', { properties: [] }],
  ['required with a number', { required: [1] }],
  ['minimum as text', { minimum: 'a' }],
  ['items as a number', { items: 1 }],
  ['an invalid schema deep in properties', { properties: { a: { properties: { b: { type: 'nope' } } } } }],
  ['an invalid schema in $defs', { $defs: { bad: { enum: 'x' } } }],
  ['a pattern that is not text', { pattern: 7 }],
  ['additionalProperties as a number', { additionalProperties: 3 }],
  ['an empty $schema', { $schema: '', type: 'string' }],
  ['a number', 5],
  ['an array', [{ type: 'string' }]],
];

describe('schemaProblem', () => {
  it.each(SCHEMAS)('answers as ajv does for %s', (_what, schema) => {
    expect(schemaProblem(schema)).toEqual(ajvSays(schema));
  });

  it('answers as ajv does for schemas with a node replaced by an odd value, or deleted', () => {
    const random = seededRandom(0x5c4e);
    const odd: unknown[] = [null, 0, -1, 1.5, '', 'x', true, false, [], [1, 1], {}, { type: 'nope' }, { minimum: 'one' }, { $ref: 5 }];
    const base = {
      type: 'object',
      $defs: { N: { type: 'number', minimum: 0 } },
      properties: { xs: { type: 'array', items: { $ref: '#/$defs/N' } }, s: { type: 'string', minLength: 1, pattern: '^a' } },
      required: ['xs'],
      additionalProperties: false,
    };
    let refused = 0;
    for (let i = 0; i < 300; i++) {
      const schema = structuredClone(base) as Record<string, unknown>;
      const nodes: Array<{ parent: Record<string, unknown>; key: string }> = [];
      const walk = (node: unknown): void => {
        if (typeof node !== 'object' || node === null) return;
        for (const [key, child] of Object.entries(node)) {
          nodes.push({ parent: node as Record<string, unknown>, key });
          walk(child);
        }
      };
      walk(schema);
      const { parent, key } = nodes[Math.floor(random() * nodes.length)]!;
      if (random() < 0.15) delete parent[key];
      else parent[key] = structuredClone(odd[Math.floor(random() * odd.length)]);
      const expected = ajvSays(schema);
      expect(schemaProblem(schema), JSON.stringify(schema)).toEqual(expected);
      if (expected !== undefined) refused++;
    }
    // Both verdicts are exercised.
    expect(refused).toBeGreaterThan(50);
    expect(refused).toBeLessThan(290);
  });

  it('finds problems among the schemas, so the comparison compares something', () => {
    const problems = SCHEMAS.filter(([, schema]) => schemaProblem(schema) !== undefined);
    expect(problems.length).toBeGreaterThan(8);
    expect(schemaProblem({ properties: { a: { type: 'nope' } } })?.at).toBe('/properties/a/type');
  });

  it('hands a schema naming another meta-schema to ajv, which knows no draft-07 there', () => {
    const draft07 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string' };
    expect(() => ajvSays(draft07)).toThrow(/no schema with key or ref/);
    expect(() => schemaProblem(draft07)).toThrow(/no schema with key or ref/);
  });
});
