// The daemon's two readers of module bytes, the memory cap and the signature walk, frame sections and
// read LEB128 through @berm/manifest, and still refuse bad bytes in their own terms: the runtime's
// callers branch on RunnerError, the deploy checks on SignatureReadError (answered as unsupported-module).
import { describe, expect, it } from 'vitest';
import { Manifest, ManifestError, customSection } from '@berm/manifest';
import { abiProblems, readSignatures } from '../dist/deploy/index.js';
import { capMemory, RunnerError } from '../dist/runtime/index.js';
import { sampleManifest } from '../../../test/helpers/harness.js';
import { wat2wasm } from '../../../test/helpers/wat.js';

const MiB = 1024 * 1024;
const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
const module = (...bytes: number[]): Uint8Array => Uint8Array.from([...HEADER, ...bytes]);
const text = (s: string): number[] => [s.length, ...new TextEncoder().encode(s)];

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('nothing was thrown');
}

const malformed: Array<[string, Uint8Array]> = [
  ['a section size cut short', module(5, 0x80)],
  ['a section past the end of the module', module(5, 9, 1)],
  ['a section size wider than 32 bits', module(5, 0x80, 0x80, 0x80, 0x80, 0x10, 0)],
  ['a custom section then a section past the end', Uint8Array.from([...module(), ...customSection('x', Uint8Array.of(1)), 1, 4, 0])],
];

describe('capMemory on bytes it cannot frame', () => {
  it('throws RunnerError bad-module, never the manifest library’s error', () => {
    const memoryFaults: Array<[string, Uint8Array]> = [
      ['a memory limit cut short by its section', module(5, 3, 1, 0x00, 0x80)],
      ['a memory limit wider than 32 bits', module(5, 7, 1, 0x00, 0xff, 0xff, 0xff, 0xff, 0x1f)],
      ['a memory count cut short', module(5, 1, 0x80)],
    ];
    for (const [what, bytes] of [...malformed, ...memoryFaults]) {
      const error = thrown(() => capMemory(bytes, 4 * MiB));
      expect(error, what).toBeInstanceOf(RunnerError);
      expect(error, what).not.toBeInstanceOf(ManifestError);
      expect((error as RunnerError).code, what).toBe('bad-module');
      expect((error as RunnerError).message, what).toMatch(/byte \d+/);
    }
  });

  it('still caps a memory section framed among custom sections', async () => {
    const bytes = await wat2wasm('(module (memory (export "memory") 1))');
    const framed = Uint8Array.from([...bytes.subarray(0, 8), ...customSection('before', Uint8Array.of(1, 2, 3)), ...bytes.subarray(8)]);
    const capped = capMemory(framed, 4 * MiB);
    expect(WebAssembly.validate(capped)).toBe(true);
    const memory = new WebAssembly.Instance(new WebAssembly.Module(capped)).exports.memory as WebAssembly.Memory;
    expect(memory.grow(63)).toBe(1);
    expect(() => memory.grow(1)).toThrow(RangeError);
  });
});

describe('readSignatures on bytes it cannot frame', () => {
  it('throws SignatureReadError, which the deploy checks answer as unsupported-module', () => {
    const manifest = Manifest.fromJSON(sampleManifest());
    for (const [what, bytes] of malformed) {
      const error = thrown(() => readSignatures(bytes));
      expect(error, what).not.toBeInstanceOf(ManifestError);
      expect((error as Error).name, what).toBe('SignatureReadError');
      expect(abiProblems(bytes, manifest, { servedSyscalls: new Set() }), what).toEqual([
        { code: 'unsupported-module', message: expect.stringContaining('the module uses a form bermd cannot check') },
      ]);
    }
  });

  it('reads past memory64 limits wider than 32 bits to the imports and exports after them', () => {
    const imports = [
      2,
      ...text('env'),
      ...text('heap'),
      0x02,
      0x05,
      0x80,
      0x80,
      0x80,
      0x80,
      0x80,
      0x20,
      0x80,
      0x80,
      0x80,
      0x80,
      0x80,
      0x40, // memory64, min 2^40, max 2^41
      ...text('berm'),
      ...text('log'),
      0x00,
      0x00,
    ];
    const exports = [1, ...text('f'), 0x00, 0x01];
    const bytes = module(
      1,
      4,
      1,
      0x60,
      0,
      0, // type 0: () -> ()
      2,
      imports.length,
      ...imports,
      3,
      2,
      1,
      0, // one function of type 0
      7,
      exports.length,
      ...exports,
    );
    const none = { params: [], results: [] };
    expect(readSignatures(bytes)).toEqual({
      imports: [
        { module: 'env', field: 'heap', kind: 'memory' },
        { module: 'berm', field: 'log', kind: 'function', type: none },
      ],
      exports: [{ name: 'f', kind: 'function', type: none }],
    });
  });
});
