import { describe, expect, it } from 'vitest';
import { Manifest, customSection, writeManifestSection, type ManifestData } from '@berm/manifest';
import { buildImage, sampleManifest, wat2wasm } from '../../../test/helpers/wat.js';
import { concat, encoder, expectCode, manifestError, withSection } from './support.js';

const WAT = `(module
  (memory (export "memory") 1)
  (func (export "berm_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "berm_tool_echo") (param i32 i32) (result i64) (i64.const 0)))`;

const BULK_MEMORY_WAT = `(module
  (memory (export "memory") 1)
  (func (export "berm_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "berm_tool_echo") (param $ptr i32) (param $len i32) (result i64)
    (memory.fill (i32.const 1024) (i32.const 0) (i32.const 64))
    (memory.copy (i32.const 2048) (local.get $ptr) (local.get $len))
    (drop (i64.trunc_sat_f64_s (f64.const 1.5)))
    (i64.or (i64.shl (i64.const 2048) (i64.const 32)) (i64.extend_i32_u (local.get $len)))))`;

function richManifest(): ManifestData {
  return sampleManifest({
    version: '0.3.1',
    homepage: 'https://example.com/weather',
    usage: 'Ask for the forecast first.',
    tools: [
      {
        name: 'forecast',
        description: 'The forecast for a city.',
        arguments: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        returns: { type: 'object', title: 'Forecast', properties: { celsius: { type: 'number' } } },
        query: true,
      },
      { name: 'set_units', description: 'Switches units.', arguments: { type: 'object' }, deprecated: true },
    ],
    events: [
      { name: 'fetched', description: 'A forecast was fetched.', fields: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'old_event', description: '', fields: true, deprecated: true },
    ],
    deps: { programs: ['geo'], syscalls: { 'berm.http.fetch': ['api.example.com'] }, secrets: ['weather_key'] },
  });
}

describe('reading wasm images', () => {
  it('merges a program record and several event records into the manifest', async () => {
    const m = richManifest();
    const image = await buildImage(WAT, m);
    const manifest = Manifest.fromImage(image);
    expect(manifest.data).toEqual(m);
    expect(manifest.tools.map((t) => t.name)).toEqual(['forecast', 'set_units']);
    expect(manifest.events.map((e) => e.name)).toEqual(['fetched', 'old_event']);
  });

  it('puts the program record’s own events before the event records, in link order', async () => {
    const records = [
      '{"event":{"name":"second","fields":true}}',
      JSON.stringify({ abi_version: 1, events: [{ name: 'first', fields: true }] }),
      '{"event":{"name":"third","fields":false}}',
    ];
    const manifest = Manifest.fromImage(await buildImage(WAT, records));
    expect(manifest.events.map((e) => e.name)).toEqual(['first', 'second', 'third']);
  });

  it('round-trips a manifest through the writer and the reader, normalized', async () => {
    const m = richManifest();
    expect(Manifest.fromImage(await buildImage(WAT, m)).toJSON()).toEqual(m);
    const sparse = Manifest.fromImage(await buildImage(WAT, ['{"abi_version":1,"tools":[{"name":"t","arguments":true}]}']));
    expect(sparse.toJSON()).toEqual(
      sampleManifest({ description: '', usage: '', version: '', tools: [{ name: 't', description: '', arguments: true }] }),
    );
    // A second trip through the writer changes nothing.
    expect(Manifest.fromImage(await buildImage(WAT, sparse.toJSON())).toJSON()).toEqual(sparse.toJSON());
  });

  it('skips NUL and whitespace padding between records', async () => {
    const m = richManifest();
    const padded = await buildImage(WAT, m, { separator: '\0\0\0\n \t\r\0' });
    expect(Manifest.fromImage(padded).data).toEqual(m);
    const image = await buildImage(WAT, ['\0\0 {"abi_version":1}\0\0', '{"event":{"name":"e","fields":true}}\n\0'], { separator: '' });
    expect(Manifest.fromImage(image).events).toEqual([{ name: 'e', description: '', fields: true }]);
  });

  it('reads every .berm.abi section as one stream, in file order', async () => {
    const first = await buildImage(WAT, ['{"abi_version":1,"usage":"u"}', '{"event":{"name":"a","fields":true}}']);
    const joined = withSection(first, '\0\0{"event":{"name":"b","fields":true}}');
    expect(Manifest.fromImage(joined).events.map((e) => e.name)).toEqual(['a', 'b']);
    // The stream is joined before it is parsed: a record may even straddle two sections.
    const split = withSection(withSection(await wat2wasm(WAT), '{"abi_version":1,"us'), 'age":"straddles"}');
    expect(Manifest.fromImage(split).data.usage).toBe('straddles');
    const module = await WebAssembly.compile(split);
    expect(WebAssembly.Module.customSections(module, '.berm.abi')).toHaveLength(2);
  });

  it('skips other custom sections, including names of the same length', async () => {
    const module = await wat2wasm(WAT);
    const image = withSection(withSection(withSection(module, 'x', '.berm.abx'), 'y', 'name'), '{"abi_version":1}');
    expect(Manifest.fromImage(withSection(image, 'not json', '.berm.ab')).data.abi_version).toBe(1);
  });

  it('reads an image with bulk-memory and saturating-truncation code that V8 compiles, without compiling it', async () => {
    const image = await buildImage(BULK_MEMORY_WAT, richManifest());
    const module = await WebAssembly.compile(image);
    expect(WebAssembly.Module.exports(module).map((e) => e.name)).toEqual(['memory', 'berm_alloc', 'berm_tool_echo']);
    expect(Manifest.fromImage(image).data).toEqual(richManifest());
  });

  it('reads the manifest of an image whose code section is not valid code', async () => {
    // Bodies are never decoded: a code section of garbage does not matter to the reader.
    const module = await wat2wasm('(module)');
    const garbageCode = concat(Uint8Array.of(10, 4), Uint8Array.of(0xff, 0xfe, 0xfd, 0xfc));
    const image = withSection(concat(module, garbageCode), '{"abi_version":1}');
    await expect(WebAssembly.compile(image)).rejects.toThrow();
    expect(Manifest.fromImage(image).data.abi_version).toBe(1);
  });

  it('reads an abi_version it does not serve, and shows it', async () => {
    const manifest = Manifest.fromImage(await buildImage(WAT, ['{"abi_version":2,"usage":"from the future"}']));
    expect(manifest.data.abi_version).toBe(2);
    expect(manifest.data.usage).toBe('from the future');
  });

  it('reads what the writer wrote over an existing section, which it replaced', async () => {
    const before = await buildImage(WAT, richManifest());
    const twice = withSection(before, '{"event":{"name":"extra","fields":true}}');
    const after = writeManifestSection(twice, sampleManifest({ usage: 'replaced' }));
    expect(Manifest.fromImage(after).data).toEqual(sampleManifest({ usage: 'replaced' }));
    const module = await WebAssembly.compile(after);
    expect(WebAssembly.Module.customSections(module, '.berm.abi')).toHaveLength(1);
  });
});

describe('framing errors in wasm images', () => {
  it('not-an-image: anything that is neither wasm nor ELF', () => {
    for (const bytes of [
      new Uint8Array(0),
      Uint8Array.of(0, 0x61, 0x73),
      encoder.encode('{"abi_version":1}'),
      Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    ]) {
      const error = manifestError(() => Manifest.fromImage(bytes));
      expectCode(error, 'not-an-image');
      expect(error.offset).toBe(0);
    }
    expect(manifestError(() => Manifest.fromImage(encoder.encode('hello world'))).message).toContain('68 65 6c 6c');
  });

  it('not-an-image: a core module of another version', () => {
    const error = manifestError(() => Manifest.fromImage(Uint8Array.of(0, 0x61, 0x73, 0x6d, 2, 0, 0, 0)));
    expectCode(error, 'not-an-image');
    expect(error.message).toContain('version 2');
  });

  it('component-not-supported: a WebAssembly component', () => {
    const component = Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00);
    const error = manifestError(() => Manifest.fromImage(withSection(component, '{"abi_version":1}')));
    expectCode(error, 'component-not-supported');
    expect(error.message).toContain('component');
  });

  it('truncated: a section that runs past the end, with the section’s file offset', async () => {
    const module = await wat2wasm(WAT);
    const image = await buildImage(WAT, richManifest());
    for (const cut of [module.length + 1, module.length + 3, module.length + 20, image.length - 1]) {
      const error = manifestError(() => Manifest.fromImage(image.subarray(0, cut)));
      expectCode(error, 'truncated');
      expect(error.offset).toBe(module.length);
      expect(error.message).toContain(`byte ${module.length}`);
    }
    expectCode(
      manifestError(() => Manifest.fromImage(image.subarray(0, 6))),
      'truncated',
    );
  });

  it('truncated: a section size inflated past the end of the file', async () => {
    const module = await wat2wasm(WAT);
    const payload = encoder.encode('{"abi_version":1}');
    const body = concat(Uint8Array.of(9), encoder.encode('.berm.abi'), payload);
    // The largest u32 as a 5-byte LEB128, where the real size belongs.
    const inflated = concat(module, Uint8Array.of(0, 0xff, 0xff, 0xff, 0xff, 0x0f), body);
    const error = manifestError(() => Manifest.fromImage(inflated));
    expectCode(error, 'truncated');
    expect(error.offset).toBe(module.length);
    expect(error.message).toContain('4294967295');
  });

  it('bad-module: a section size that is not a LEB128 u32', async () => {
    const module = await wat2wasm(WAT);
    const error = manifestError(() => Manifest.fromImage(concat(module, Uint8Array.of(0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0))));
    expectCode(error, 'bad-module');
    expect(error.offset).toBe(module.length);
  });

  it('bad-module: a custom section name longer than its section', async () => {
    const module = await wat2wasm(WAT);
    const error = manifestError(() => Manifest.fromImage(concat(module, Uint8Array.of(0, 3, 40, 0x2e, 0x62))));
    expectCode(error, 'bad-module');
    expect(error.offset).toBe(module.length + 3);
  });

  it('no-manifest: a module without the section', async () => {
    const module = await wat2wasm(WAT);
    for (const image of [module, withSection(module, '{"abi_version":1}', 'berm.abi'), customSectionOnly()]) {
      const error = manifestError(() => Manifest.fromImage(image));
      expectCode(error, 'no-manifest');
      expect(error.message).toContain('.berm.abi');
    }
  });
});

function customSectionOnly(): Uint8Array {
  return concat(Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0), customSection('producers', encoder.encode('x')));
}
