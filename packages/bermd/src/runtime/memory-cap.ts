/**
 * The guest memory cap, applied to the module's bytes before they are compiled.
 *
 * Why rewrite the binary: a memory the module defines itself is created by V8 from the limits in the
 * module's memory section, and the JS API offers no way to impose a smaller maximum on it per instance
 * (only a memory the host creates and passes as an import can be sized by the host, and berm guests
 * export their own memory). Without a cap a guest could `memory.grow` until the process fails. Setting
 * the maximum in the memory section to min(declared maximum, cap) makes V8 itself refuse the growth:
 * `memory.grow` returns -1 inside the guest, which the guest can handle like any allocation failure,
 * and the host never allocates past the cap. The edit is exact and small: one section's limits are
 * re-encoded and its size prefix adjusted; every other byte is kept.
 */
import { encodeU32, isManifestError, moduleSections, readU32, type SectionFrame } from '@berm/manifest';
import { RunnerError } from './errors.js';

export const WASM_PAGE_BYTES = 65536;
const SECTION_MEMORY = 5;
const FLAG_HAS_MAX = 0x01;
const FLAG_SHARED = 0x02;
const FLAG_MEMORY64 = 0x04;

function mib(pages: number): string {
  const bytes = pages * WASM_PAGE_BYTES;
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** The number of whole wasm pages that fit in `maxBytes`. */
export function capPages(maxBytes: number): number {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < WASM_PAGE_BYTES) {
    throw new RangeError(`a memory cap must be an integer of at least ${WASM_PAGE_BYTES} bytes (one wasm page), not ${maxBytes}`);
  }
  return Math.min(Math.floor(maxBytes / WASM_PAGE_BYTES), 65536);
}

/**
 * Returns `bytes` with every memory the module defines given a maximum of at most `maxBytes`
 * (rounded down to whole 64 KiB pages). A module that defines no memory comes back unchanged (the same array).
 * Throws `RunnerError` `memory-too-large` when a memory's initial size is above the cap (no call could
 * start, so the deploy must refuse it), `bad-module` when the bytes are not a wasm module this can read.
 * Imported memories are left alone: the runtime serves none, so the deploy checks refuse them.
 */
export function capMemory(bytes: Uint8Array, maxBytes: number): Uint8Array {
  const cap = capPages(maxBytes);
  if (bytes.length < 8 || bytes[0] !== 0x00 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new RunnerError('bad-module', 'not a wasm module: the first four bytes are not \\0asm');
  }
  if (bytes[4] !== 1 || bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) {
    throw new RunnerError('bad-module', 'not a wasm core module of version 1 (a component, or a future binary format)');
  }
  try {
    for (const section of moduleSections(bytes)) {
      if (section.id === SECTION_MEMORY) return withMemorySection(bytes, section, cap);
    }
    return bytes;
  } catch (e) {
    // Frames and LEB128 integers are read by @berm/manifest, which refuses in its own terms; the
    // runtime's callers branch on RunnerError, and for them unreadable bytes are a bad module.
    if (isManifestError(e)) throw new RunnerError('bad-module', e.message);
    throw e;
  }
}

/** `bytes` with the memory section `section` rewritten to capped limits, or `bytes` itself when none change. */
function withMemorySection(bytes: Uint8Array, { start, bodyStart, bodyEnd }: SectionFrame, cap: number): Uint8Array {
  const body = rewriteMemorySection(bytes, bodyStart, bodyEnd, cap);
  if (body === null) return bytes;
  const header = [SECTION_MEMORY, ...encodeU32(body.length)];
  const out = new Uint8Array(start + header.length + body.length + (bytes.length - bodyEnd));
  out.set(bytes.subarray(0, start), 0);
  out.set(header, start);
  out.set(body, start + header.length);
  out.set(bytes.subarray(bodyEnd), start + header.length + body.length);
  return out;
}

/** The memory section's body with capped limits, or null when no limit needs to change. */
function rewriteMemorySection(bytes: Uint8Array, start: number, end: number, cap: number): Uint8Array | null {
  const count = readU32(bytes, start, end);
  let pos = count.next;
  const out: number[] = [...encodeU32(count.value)];
  let changed = false;
  for (let index = 0; index < count.value; index++) {
    if (pos >= end) throw new RunnerError('bad-module', `memory ${index} runs past the end of the memory section`);
    const flags = bytes[pos++]!;
    if (flags & FLAG_MEMORY64)
      throw new RunnerError('bad-module', `memory ${index} is a 64-bit memory, which the runtime does not run`, `memory ${index}`);
    if (flags & ~(FLAG_HAS_MAX | FLAG_SHARED))
      throw new RunnerError(
        'bad-module',
        `memory ${index} has limit flags 0x${flags.toString(16)}, which the runtime does not know`,
        `memory ${index}`,
      );
    const min = readU32(bytes, pos, end);
    pos = min.next;
    let max: number | undefined;
    if (flags & FLAG_HAS_MAX) {
      const m = readU32(bytes, pos, end);
      max = m.value;
      pos = m.next;
    }
    if (min.value > cap) {
      throw new RunnerError(
        'memory-too-large',
        `memory ${index} starts at ${min.value} pages (${mib(min.value)}), above the memory cap of ${cap} pages (${mib(cap)})`,
        `memory ${index}`,
      );
    }
    const capped = max === undefined ? cap : Math.min(max, cap);
    if (capped !== max) changed = true;
    out.push(flags | FLAG_HAS_MAX, ...encodeU32(min.value), ...encodeU32(capped));
  }
  if (pos !== end) throw new RunnerError('bad-module', `the memory section has ${end - pos} bytes after its last memory`);
  return changed ? Uint8Array.from(out) : null;
}
