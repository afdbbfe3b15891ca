// Every way bermd refuses an image at deploy, as (image, expected code, status) cases shared by the
// core tests and the end-to-end tests.
import { writeManifestSection, type ManifestData } from '@berm/manifest';
import { buildElf } from '../../../test/helpers/elf.js';
import { harnessImage, manifestWithTools, sampleManifest } from '../../../test/helpers/harness.js';
import { buildImage, wat2wasm } from '../../../test/helpers/wat.js';

export interface RefusalCase {
  title: string;
  code: string;
  status: number;
  image: () => Promise<Uint8Array>;
  /** For `bad-image`: the reader's own code, kept in the body as `reason`. */
  reason?: string;
}

const withSyscall = (syscall: string): ManifestData =>
  sampleManifest({ deps: { programs: [], syscalls: { [syscall]: ['api.example.com'] }, secrets: [] } });

/** A module that decodes section by section (so its manifest reads) but that V8 rejects: one function declared, no code for it. */
export function uncompilableImage(manifest: ManifestData = sampleManifest()): Uint8Array {
  const module = Uint8Array.of(
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    0x01,
    0x04,
    0x01,
    0x60,
    0x00,
    0x00, // type section: () -> ()
    0x03,
    0x02,
    0x01,
    0x00, // function section: one function of type 0, and no code section
  );
  return writeManifestSection(module, manifest);
}

export const refusals: RefusalCase[] = [
  {
    title: 'an image without a .berm.abi section',
    code: 'bad-image',
    reason: 'no-manifest',
    status: 400,
    image: () => wat2wasm('(module (memory (export "memory") 1))'),
  },
  {
    title: 'a manifest record that is not JSON',
    code: 'bad-image',
    reason: 'bad-record',
    status: 400,
    image: () => buildImage('(module)', ['{"abi_version": 1,']),
  },
  {
    title: 'bytes that are no image at all',
    code: 'bad-image',
    reason: 'not-an-image',
    status: 400,
    image: async () => new TextEncoder().encode('hello, world'),
  },
  {
    title: 'an ELF image',
    code: 'not-wasm',
    status: 422,
    image: async () =>
      buildElf({
        bits: 64,
        endian: 'little',
        sections: [{ name: '.berm.abi', data: new TextEncoder().encode(JSON.stringify(sampleManifest())) }],
      }).bytes,
  },
  { title: 'abi_version 2', code: 'abi-version', status: 422, image: () => harnessImage(sampleManifest({ abi_version: 2 })) },
  { title: 'a module V8 does not compile', code: 'compile-error', status: 422, image: async () => uncompilableImage() },
  { title: 'no memory export', code: 'missing-memory', status: 422, image: () => harnessImage(sampleManifest(), { omit: ['memory'] }) },
  {
    title: 'a "memory" export that is a global',
    code: 'missing-memory',
    status: 422,
    image: () => harnessImage(sampleManifest(), { omit: ['memory'], extraWat: '(global (export "memory") i32 (i32.const 0))' }),
  },
  {
    title: 'no berm_alloc export',
    code: 'missing-alloc',
    status: 422,
    image: () => harnessImage(sampleManifest(), { omit: ['berm_alloc'] }),
  },
  {
    title: 'berm_alloc returning i64',
    code: 'bad-export-signature',
    status: 422,
    image: () => harnessImage(sampleManifest(), { signatures: { berm_alloc: { params: ['i32'], results: ['i64'] } } }),
  },
  {
    title: 'a tool without its berm_tool_ export',
    code: 'missing-export',
    status: 422,
    image: () => harnessImage(manifestWithTools(['echo', 'size']), { omit: ['berm_tool_size'] }),
  },
  {
    title: 'a tool export returning i32',
    code: 'bad-export-signature',
    status: 422,
    image: () => harnessImage(sampleManifest(), { signatures: { berm_tool_echo: { params: ['i32', 'i32'], results: ['i32'] } } }),
  },
  {
    title: 'a tool export that is a global',
    code: 'bad-export-signature',
    status: 422,
    image: () =>
      harnessImage(sampleManifest(), { omit: ['berm_tool_echo'], extraWat: '(global (export "berm_tool_echo") i32 (i32.const 0))' }),
  },
  {
    title: 'an undeclared function import',
    code: 'undeclared-import',
    status: 422,
    image: () => harnessImage(sampleManifest(), { imports: [{ name: 'env.thing' }] }),
  },
  {
    title: 'a global import',
    code: 'undeclared-import',
    status: 422,
    image: () => harnessImage(sampleManifest(), { imports: [{ name: 'env.g', kind: 'global' }] }),
  },
  {
    title: 'an ABI host call imported with the wrong signature',
    code: 'bad-import-signature',
    status: 422,
    image: () => harnessImage(sampleManifest(), { imports: [{ name: 'berm.log', params: ['i32'], results: ['i32'] }] }),
  },
  {
    title: 'a declared, imported syscall bermd does not serve',
    code: 'unserved-syscall',
    status: 422,
    image: () => harnessImage(withSyscall('berm.http.fetch'), { imports: [{ name: 'berm.http.fetch' }] }),
  },
  {
    title: 'a declared syscall bermd does not serve, not imported',
    code: 'unserved-syscall',
    status: 422,
    image: () => harnessImage(withSyscall('berm.http.fetch')),
  },
];

/** Images every host accepts: the ABI's own host calls imported with their signature. */
export function abiImportsImage(): Promise<Uint8Array> {
  return harnessImage(sampleManifest(), { imports: [{ name: 'berm.call' }, { name: 'berm.log' }, { name: 'berm.emit' }] });
}

export { withSyscall };
