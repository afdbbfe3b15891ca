// Fixtures are built from readable sources at test time: WAT through wabt, then the manifest through the writer.
import wabtInit from 'wabt';
import { writeManifestSection, type ManifestData, type WriteOptions } from '@berm/manifest';

type Wabt = Awaited<ReturnType<typeof wabtInit>>;
let wabt: Promise<Wabt> | undefined;

/** Compiles WAT text to a wasm binary. Bulk memory, SIMD and the other finished proposals are on. */
export async function wat2wasm(source: string): Promise<Uint8Array> {
  wabt ??= wabtInit();
  const w = await wabt;
  const module = w.parseWat('fixture.wat', source, {
    bulk_memory: true,
    multi_value: true,
    mutable_globals: true,
    reference_types: true,
    sat_float_to_int: true,
    sign_extension: true,
    simd: true,
  });
  try {
    module.resolveNames();
    module.validate();
    return Uint8Array.from(module.toBinary({}).buffer);
  } finally {
    module.destroy();
  }
}

/** A wasm image: `wat` compiled, with `records` (a merged manifest or raw record texts) as its `.berm.abi`. */
export async function buildImage(wat: string, records: ManifestData | readonly string[], options?: WriteOptions): Promise<Uint8Array> {
  return writeManifestSection(await wat2wasm(wat), records, options);
}

/** A complete manifest with every member filled, for tests that vary one thing. */
export function sampleManifest(overrides: Partial<ManifestData> = {}): ManifestData {
  return {
    abi_version: 1,
    version: '0.1.0',
    description: 'A sample program',
    homepage: '',
    repository: '',
    readme: '',
    usage: 'Call echo with a query.',
    tools: [
      {
        name: 'echo',
        description: 'Returns its query.',
        arguments: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
        returns: { type: 'object', title: 'Echo', properties: { query: { type: 'string' } }, required: ['query'] },
        query: true,
      },
    ],
    events: [],
    deps: { programs: [], syscalls: {}, secrets: [] },
    ...overrides,
  };
}
