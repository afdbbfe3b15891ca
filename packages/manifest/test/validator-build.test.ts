// The manifest validator is generated at build time (scripts/build-validator.js). These tests hold
// it to what ajv compiles from the schema at run time, and check that the reader does without ajv's
// compiler, which is the reason it is generated.
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Manifest, ManifestError, manifestSchema } from '@berm/manifest';
import { AJV_OPTIONS, outputFile, validatorSource } from '../scripts/build-validator.js';
import { sampleManifest } from '../../../test/helpers/wat.js';
import { seededRandom as prng } from '../../../test/helpers/random.js';

interface Check {
  (data: unknown): boolean;
  errors?: unknown[] | null;
}

const generated = (await import(pathToFileURL(outputFile).href)) as { validate: Check };

async function compiledAtRunTime(): Promise<Check> {
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  return new Ajv2020({ ...AJV_OPTIONS }).compile(manifestSchema) as Check;
}

/** Values that break the manifest or the schemas inside it in the ways the meta-schema checks. */
const ODD: unknown[] = [
  null,
  0,
  -1,
  1.5,
  '',
  'x',
  '9bad',
  true,
  false,
  [],
  [1, 1],
  ['a', 'a'],
  {},
  { type: 'nope' },
  { type: ['string', 'string'] },
  { minimum: 'one' },
  { required: ['a', 'a'] },
  { $ref: 5 },
  { $defs: { A: 3 } },
  { properties: { a: 'b' } },
  { items: [true] },
  { enum: [] },
  { $anchor: '1bad' },
  { $id: 'a#b' },
  { minLength: -1 },
  { allOf: [] },
  { dependentRequired: { a: [1] } },
  { $dynamicAnchor: 'x' },
  { unevaluatedProperties: 1 },
];

/** Replaces one randomly chosen node of `doc` (which it mutates) by an odd value, or deletes it. */
function mutate(doc: unknown, random: () => number): void {
  const nodes: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (node: unknown) => {
    if (typeof node !== 'object' || node === null) return;
    for (const [key, child] of Object.entries(node)) {
      nodes.push({ parent: node as Record<string, unknown>, key: Array.isArray(node) ? Number(key) : key });
      walk(child);
    }
  };
  walk(doc);
  const { parent, key } = nodes[Math.floor(random() * nodes.length)]!;
  const r = random();
  if (r < 0.15 && !Array.isArray(parent)) delete parent[key as string];
  else (parent as Record<string | number, unknown>)[key] = structuredClone(ODD[Math.floor(random() * ODD.length)]);
}

describe('the generated manifest validator', () => {
  it('is what the schema generates today (else `npm run build` has not run since it changed)', async () => {
    expect(await readFile(outputFile, 'utf8')).toBe(validatorSource());
  });

  it('decides and reports as the validator ajv compiles at run time, on valid and mutated manifests', async () => {
    const reference = await compiledAtRunTime();
    const random = prng(0x5eed);
    const base = {
      ...sampleManifest(),
      tools: [
        { name: 'echo', arguments: { type: 'object', properties: { s: { type: 'string', minLength: 1 } }, required: ['s'] } },
        {
          name: 'sum',
          arguments: {
            type: 'object',
            $defs: { N: { type: 'number' } },
            properties: { xs: { type: 'array', items: { $ref: '#/$defs/N' } } },
          },
          returns: { $ref: '#/$defs/N', $defs: { N: { type: 'number' } } },
          query: true,
        },
      ],
      events: [
        { name: 'seen', fields: { type: 'object', additionalProperties: false, properties: { at: { type: 'integer', minimum: 0 } } } },
      ],
      deps: { programs: ['p'], syscalls: { net: ['a.example'] }, secrets: ['k'] },
    };
    let rejected = 0;
    for (let i = 0; i < 600; i++) {
      const doc = structuredClone(base);
      for (let n = 1 + Math.floor(random() * 3); n > 0; n--) mutate(doc, random);
      const expected = reference(structuredClone(doc));
      const actual = generated.validate(structuredClone(doc));
      expect(actual, JSON.stringify(doc)).toBe(expected);
      expect(generated.validate.errors ?? null, JSON.stringify(doc)).toEqual(reference.errors ?? null);
      if (!actual) rejected++;
    }
    // Both outcomes are exercised, not just one.
    expect(rejected).toBeGreaterThan(100);
    expect(rejected).toBeLessThan(590);
    expect(generated.validate(base)).toBe(true);
  });

  it('is what validation runs: a mutation is reported with its path', () => {
    const error = (() => {
      try {
        Manifest.fromJSON({ abi_version: 1, tools: [{ name: 'a', arguments: { type: 'object', properties: { x: { minLength: -1 } } } }] });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as ManifestError).path).toBe('/tools/0/arguments/properties/x/minLength');
  });

  it('lets an image be read without loading ajv’s compiler', () => {
    const script = `
      import { createRequire } from 'node:module';
      const { Manifest } = await import('@berm/manifest');
      Manifest.fromJSON(${JSON.stringify(sampleManifest())});
      let refused = false;
      try { Manifest.fromJSON({ abi_version: 1, tools: [{ name: 'a', arguments: { type: 7 } }] }); } catch { refused = true; }
      const ajvFiles = () => Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/ajv/'));
      const loaded = ajvFiles();
      // The control: once ajv's compiler is imported, the same probe sees it.
      await import('ajv/dist/2020.js');
      process.stdout.write(JSON.stringify({ refused, loaded, control: ajvFiles() }));
    `;
    const cwd = fileURLToPath(new URL('..', import.meta.url));
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const outcome = JSON.parse(run.stdout) as { refused: boolean; loaded: string[]; control: string[] };
    expect(outcome.refused).toBe(true);
    const inAjv = (files: string[]) => files.map((f) => f.slice(f.lastIndexOf('/ajv/') + '/ajv/'.length));
    // Only the runtime helpers that the generated code calls; never ajv's core or its compiler.
    for (const file of inAjv(outcome.loaded)) expect(file).toMatch(/^dist\/runtime\//);
    expect(inAjv(outcome.control)).toContain('dist/2020.js');
    expect(inAjv(outcome.control)).toContain('dist/compile/index.js');
  });
});
