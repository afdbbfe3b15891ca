import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Manifest, manifestSchema, writeManifestSection } from '@berm/manifest';
import { buildImage, sampleManifest } from '../../../test/helpers/wat.js';
import { expectCode, manifestError } from './support.js';

function invalid(value: unknown, path: string) {
  const error = manifestError(() => Manifest.fromJSON(value));
  expectCode(error, 'invalid-manifest');
  expect(error.path).toBe(path);
  expect(error.message).toContain(path === '' ? 'at /' : `at ${path}`);
  return error;
}

const tool = (over: Record<string, unknown> = {}) => ({ name: 'echo', arguments: { type: 'object' }, ...over });
const event = (over: Record<string, unknown> = {}) => ({ name: 'seen', fields: { type: 'object' }, ...over });

describe('validation and defaults', () => {
  it('fills every missing member with its empty value', () => {
    expect(Manifest.fromJSON({ abi_version: 1 }).data).toEqual({
      abi_version: 1,
      version: '',
      description: '',
      homepage: '',
      repository: '',
      readme: '',
      usage: '',
      tools: [],
      events: [],
      deps: { programs: [], syscalls: {}, secrets: [] },
    });
    const m = Manifest.fromJSON({ abi_version: 1, tools: [tool()], events: [event()], deps: { secrets: ['k'] } });
    expect(m.tools[0]).toEqual({ name: 'echo', description: '', arguments: { type: 'object' } });
    expect(m.events[0]).toEqual({ name: 'seen', description: '', fields: { type: 'object' } });
    expect(m.data.deps).toEqual({ programs: [], syscalls: {}, secrets: ['k'] });
  });

  it('returns a fresh object that does not alias its input', () => {
    const input = sampleManifest();
    const m = Manifest.fromJSON(input);
    expect(m.data).toEqual(input);
    expect(m.data).not.toBe(input);
    (input.tools[0]!.arguments as { type: string }).type = 'string';
    input.deps.programs.push('changed');
    expect(m.tools[0]!.arguments).toEqual(sampleManifest().tools[0]!.arguments);
    expect(m.data.deps.programs).toEqual([]);
  });

  it('keeps the known members first and members it does not know after them', () => {
    const m = Manifest.fromJSON({ future: { x: 1 }, tools: [tool({ hint: 'h' })], abi_version: 1 });
    expect(Object.keys(m.data)).toEqual([
      'abi_version',
      'version',
      'description',
      'homepage',
      'repository',
      'readme',
      'usage',
      'tools',
      'events',
      'deps',
      'future',
    ]);
    expect(m.tools[0]).toEqual({ name: 'echo', description: '', arguments: { type: 'object' }, hint: 'h' });
  });

  it('accepts any integer abi_version and exposes it', () => {
    expect(Manifest.fromJSON({ abi_version: 7 }).data.abi_version).toBe(7);
    expect(Manifest.fromJSON({ abi_version: 0 }).data.abi_version).toBe(0);
  });

  it('accepts boolean schemas and 2020-12 schemas with $defs or definitions', () => {
    const m = Manifest.fromJSON({
      abi_version: 1,
      tools: [
        tool({ arguments: true, returns: false }),
        tool({
          name: 'lookup',
          arguments: { type: 'object', properties: { p: { $ref: '#/$defs/P' } }, $defs: { P: { type: 'string' } } },
          returns: { $ref: '#/definitions/R', definitions: { R: { type: 'integer', minimum: 0, format: 'uint32' } } },
        }),
      ],
    });
    expect(m.tools.map((t) => t.name)).toEqual(['echo', 'lookup']);
  });

  it('invalid-manifest: the value is not an object or not JSON', () => {
    invalid(5, '');
    invalid(null, '');
    invalid([], '');
    invalid(undefined, '');
    invalid({ abi_version: 1n }, '');
  });

  it('invalid-manifest: nesting too deep for the recursive steps, or circular, at its path', async () => {
    const nest = (levels: number) => {
      let schema = '{"type":"string"}';
      for (let i = 0; i < levels; i++) schema = `{"type":"object","properties":{"a":${schema}}}`;
      return `{"abi_version":1,"tools":[{"name":"t","arguments":${schema}}]}`;
    };
    // A schema nested 40 objects deep is unusual but fine.
    expect(Manifest.fromImage(await buildImage('(module)', [nest(40)])).tools).toHaveLength(1);
    for (const levels of [100, 100_000]) {
      const error = manifestError(() => Manifest.fromImage(Buffer.from(withDeep(levels))));
      expectCode(error, 'invalid-manifest');
      expect(error.path).toMatch(/^\/tools\/0\/arguments(\/properties|\/a)+$/);
      expect(error.message).toContain('nested deeper');
    }
    function withDeep(levels: number) {
      return writeManifestSection(Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0), [nest(levels)]);
    }
    const cyclic: Record<string, unknown> = { abi_version: 1 };
    cyclic.self = cyclic;
    const error = manifestError(() => Manifest.fromJSON(cyclic));
    expectCode(error, 'invalid-manifest');
    expect(error.message).toContain('circular');
  });

  it('invalid-manifest: abi_version missing or not an integer', () => {
    expect(invalid({}, '/abi_version').message).toContain('missing');
    expect(invalid({ abi_version: '1' }, '/abi_version').message).toContain('integer');
    invalid({ abi_version: 1.5 }, '/abi_version');
  });

  it('invalid-manifest: string members that are not strings', () => {
    for (const member of ['version', 'description', 'homepage', 'repository', 'readme', 'usage']) {
      invalid({ abi_version: 1, [member]: 3 }, `/${member}`);
    }
  });

  it('invalid-manifest: tool and event names', () => {
    expect(invalid({ abi_version: 1, tools: [tool({ name: 'has-dash' })] }, '/tools/0/name').message).toContain('"has-dash"');
    invalid({ abi_version: 1, tools: [tool(), tool({ name: '9lives' })] }, '/tools/1/name');
    invalid({ abi_version: 1, tools: [tool({ name: 'has.dot' })] }, '/tools/0/name');
    invalid({ abi_version: 1, events: [event({ name: '' })] }, '/events/0/name');
    invalid({ abi_version: 1, tools: [{ arguments: {} }] }, '/tools/0/name');
  });

  it('invalid-manifest: duplicate names within a list, at the second one', () => {
    const error = invalid({ abi_version: 1, tools: [tool(), tool({ name: 'other' }), tool()] }, '/tools/2/name');
    expect(error.message).toContain('/tools/0');
    invalid({ abi_version: 1, events: [event(), event()] }, '/events/1/name');
    // The same name as a tool and as an event is fine.
    expect(Manifest.fromJSON({ abi_version: 1, tools: [tool({ name: 'x' })], events: [event({ name: 'x' })] }).tools).toHaveLength(1);
  });

  it('invalid-manifest: schemas that are not JSON Schemas', () => {
    invalid({ abi_version: 1, tools: [tool({ arguments: 'object' })] }, '/tools/0/arguments');
    invalid({ abi_version: 1, tools: [tool({ arguments: undefined })] }, '/tools/0/arguments');
    invalid({ abi_version: 1, tools: [tool({ returns: 1 })] }, '/tools/0/returns');
    invalid({ abi_version: 1, events: [event({ fields: [] })] }, '/events/0/fields');
    invalid({ abi_version: 1, events: [{ name: 'e' }] }, '/events/0/fields');
    const deep = invalid(
      { abi_version: 1, tools: [tool({ arguments: { type: 'object', properties: { q: { type: 'strin' } } } })] },
      '/tools/0/arguments/properties/q/type',
    );
    expect(deep.message).toContain('"strin"');
    invalid({ abi_version: 1, tools: [tool({ arguments: { required: 'q' } })] }, '/tools/0/arguments/required');
  });

  it('invalid-manifest: flags and lists of the wrong type', () => {
    invalid({ abi_version: 1, tools: [tool({ query: 'yes' })] }, '/tools/0/query');
    invalid({ abi_version: 1, events: [event({ deprecated: 1 })] }, '/events/0/deprecated');
    invalid({ abi_version: 1, tools: {} }, '/tools');
    invalid({ abi_version: 1, tools: [5] }, '/tools/0');
  });

  it('invalid-manifest: deps', () => {
    invalid({ abi_version: 1, deps: [] }, '/deps');
    invalid({ abi_version: 1, deps: { programs: 'weather' } }, '/deps/programs');
    invalid({ abi_version: 1, deps: { secrets: [1] } }, '/deps/secrets/0');
    invalid({ abi_version: 1, deps: { syscalls: { 'berm.http.fetch': 'api.example.com' } } }, '/deps/syscalls/berm.http.fetch');
    invalid({ abi_version: 1, deps: { syscalls: { 'a/b': [2] } } }, '/deps/syscalls/a~1b/0');
  });

  it('invalid-manifest: a control character in a name or a one-line label, saying which and where, quoted inertly', () => {
    const esc = '\u001b';
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ version: `1.0${esc}[31mRED${esc}]0;pwned\u0007` }, '/version', 'U+001B at index 3'],
      [{ homepage: 'https://example.com/\r' }, '/homepage', 'U+000D at index 20'],
      [{ repository: 'git\u0000' }, '/repository', 'U+0000 at index 3'],
      [{ deps: { programs: ['weather', `x${esc}[2Jy`] } }, '/deps/programs/1', 'U+001B at index 1'],
      [{ deps: { secrets: ['key\u007f'] } }, '/deps/secrets/0', 'U+007F at index 3'],
      [
        { deps: { syscalls: { 'berm.http.fetch': ['api.example.com\u009b2J'] } } },
        '/deps/syscalls/berm.http.fetch/0',
        'U+009B at index 15',
      ],
      [{ deps: { syscalls: { 'berm.http\u0085fetch': [] } } }, '/deps/syscalls', 'U+0085 at index 9'],
    ];
    for (const [members, path, where] of cases) {
      const error = invalid({ abi_version: 1, ...members }, path);
      expect(error.message).toContain(`holds a control character (${where}), which a name or a one-line label may not`);
      // The value is quoted with JSON escapes, C1 and DEL included: the message itself holds none.
      expect(error.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    }
    // Prose and schemas are taken as written: line breaks, tabs, and whatever a schema's data allows.
    const prose = Manifest.fromJSON({
      abi_version: 1,
      version: '2.0.0-rc.1+ünïcode',
      description: 'Line one\n\tline two',
      usage: `Say ${esc}[1mhi${esc}[0m`,
      tools: [tool({ description: 'a\r\nb', arguments: { type: 'object', properties: { sep: { enum: ['\u0000', '\u001e'] } } } })],
    });
    expect(prose.data.usage).toBe(`Say ${esc}[1mhi${esc}[0m`);
    expect(prose.tools[0]!.arguments).toEqual({ type: 'object', properties: { sep: { enum: ['\u0000', '\u001e'] } } });
  });

  it('invalid-manifest from an image carries the same path', async () => {
    const image = await buildImage('(module)', [
      '{"abi_version":1,"tools":[{"name":"ok","arguments":true},{"name":"bad name","arguments":true}]}',
    ]);
    const error = manifestError(() => Manifest.fromImage(image));
    expectCode(error, 'invalid-manifest');
    expect(error.path).toBe('/tools/1/name');
  });
});

describe('the shipped schema', () => {
  it('is the file the package exports, parsed and frozen', async () => {
    const require = createRequire(import.meta.url);
    const path = require.resolve('@berm/manifest/schema.json');
    expect(manifestSchema).toEqual(JSON.parse(await readFile(path, 'utf8')));
    expect(Object.isFrozen(manifestSchema)).toBe(true);
    expect(manifestSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  it('is a valid 2020-12 schema that accepts what the reader returns', async () => {
    const { Ajv2020 } = await import('ajv/dist/2020.js');
    const ajv = new Ajv2020({ allowUnionTypes: true, validateFormats: false });
    const validate = ajv.compile(manifestSchema);
    expect(validate(Manifest.fromJSON(sampleManifest()).toJSON())).toBe(true);
    expect(validate({ abi_version: 'one' })).toBe(false);
  });
});
