import { elfSections } from './elf.js';
import { ManifestError } from './errors.js';
import { read, runOnBytes, type Reader } from './source.js';
import { wasmSections } from './wasm.js';
import { SECTION_NAME } from './writer.js';

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];
const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];
/** Enough for the magic and either an 8-byte wasm header or the 16-byte ELF identification. */
const SNIFF = 16;

/**
 * Reads the `.berm.abi` stream of an image of `size` bytes: every occurrence of the section, in file
 * order, joined. Framing errors carry the file offset where the problem is.
 */
export function* manifestStream(size: number): Reader<Uint8Array> {
  if (size < 4) {
    throw new ManifestError('not-an-image', `a ${size}-byte file is neither a WebAssembly module nor an ELF file`, { offset: 0 });
  }
  const head = yield* read(0, Math.min(SNIFF, size));
  let parts: Uint8Array[];
  if (startsWith(head, WASM_MAGIC)) {
    if (size < 8) {
      throw new ManifestError('truncated', `the WebAssembly header (8 bytes) runs past the end of the image (${size} bytes)`, {
        offset: 0,
      });
    }
    checkWasmVersion(head);
    parts = yield* wasmSections(size);
    if (parts.length === 0) {
      throw new ManifestError('no-manifest', `the WebAssembly module has no ${SECTION_NAME} custom section`);
    }
  } else if (startsWith(head, ELF_MAGIC)) {
    parts = yield* elfSections(size, head);
  } else {
    const hex = Array.from(head.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
    throw new ManifestError('not-an-image', `neither a WebAssembly module nor an ELF file (the first bytes are ${hex})`, { offset: 0 });
  }
  return join(parts);
}

/** The `.berm.abi` bytes of an image in memory, every occurrence joined in file order. */
export function extractSection(bytes: Uint8Array): Uint8Array {
  return runOnBytes(manifestStream(bytes.length), bytes);
}

function checkWasmVersion(head: Uint8Array): void {
  // The 4 bytes after the magic are a version (bytes 4-5) and a layer (bytes 6-7): layer 1 is a component.
  const version = head[4]! | (head[5]! << 8);
  const layer = head[6]! | (head[7]! << 8);
  if (layer === 1) {
    throw new ManifestError(
      'component-not-supported',
      `this is a WebAssembly component (layer 1, version ${version}); berm reads core modules, which carry the ${SECTION_NAME} section`,
      { offset: 4 },
    );
  }
  if (layer !== 0 || version !== 1) {
    throw new ManifestError('not-an-image', `WebAssembly binary version ${version} (layer ${layer}) is not a core module of version 1`, {
      offset: 4,
    });
  }
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function join(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
