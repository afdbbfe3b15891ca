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
import { RunnerError } from './errors.js';

export const WASM_PAGE_BYTES = 65536;
const SECTION_MEMORY = 5;
const FLAG_HAS_MAX = 0x01;
const FLAG_SHARED = 0x02;
const FLAG_MEMORY64 = 0x04;

function readU32(bytes: Uint8Array, offset: number, end: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0, pos = offset; i < 5; i++, pos++) {
    if (pos >= end) throw new RunnerError('bad-module', `LEB128 integer at byte ${offset} runs past the end of its section`);
    const byte = bytes[pos]!;
    if (i === 4 && byte > 0x0f) throw new RunnerError('bad-module', `LEB128 integer at byte ${offset} does not fit in 32 bits`);
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return { value, next: pos + 1 };
  }
  throw new RunnerError('bad-module', `LEB128 integer at byte ${offset} is longer than 5 bytes`);
}

function writeU32(out: number[], value: number): void {
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
}

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
  let pos = 8;
  while (pos < bytes.length) {
    const sectionStart = pos;
    const id = bytes[pos]!;
    const size = readU32(bytes, pos + 1, bytes.length);
    const bodyStart = size.next;
    const bodyEnd = bodyStart + size.value;
    if (bodyEnd > bytes.length) throw new RunnerError('bad-module', `section ${id} at byte ${sectionStart} runs past the end of the module`);
    if (id === SECTION_MEMORY) {
      const body = rewriteMemorySection(bytes, bodyStart, bodyEnd, cap);
      if (body === null) return bytes;
      const header: number[] = [SECTION_MEMORY];
      writeU32(header, body.length);
      const out = new Uint8Array(sectionStart + header.length + body.length + (bytes.length - bodyEnd));
      out.set(bytes.subarray(0, sectionStart), 0);
      out.set(header, sectionStart);
      out.set(body, sectionStart + header.length);
      out.set(bytes.subarray(bodyEnd), sectionStart + header.length + body.length);
      return out;
    }
    pos = bodyEnd;
  }
  return bytes;
}

/** The memory section's body with capped limits, or null when no limit needs to change. */
function rewriteMemorySection(bytes: Uint8Array, start: number, end: number, cap: number): Uint8Array | null {
  const count = readU32(bytes, start, end);
  let pos = count.next;
  const out: number[] = [];
  writeU32(out, count.value);
  let changed = false;
  for (let index = 0; index < count.value; index++) {
    if (pos >= end) throw new RunnerError('bad-module', `memory ${index} runs past the end of the memory section`);
    const flags = bytes[pos++]!;
    if (flags & FLAG_MEMORY64) throw new RunnerError('bad-module', `memory ${index} is a 64-bit memory, which the runtime does not run`, `memory ${index}`);
    if (flags & ~(FLAG_HAS_MAX | FLAG_SHARED)) throw new RunnerError('bad-module', `memory ${index} has limit flags 0x${flags.toString(16)}, which the runtime does not know`, `memory ${index}`);
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
    out.push(flags | FLAG_HAS_MAX);
    writeU32(out, min.value);
    writeU32(out, capped);
  }
  if (pos !== end) throw new RunnerError('bad-module', `the memory section has ${end - pos} bytes after its last memory`);
  return changed ? Uint8Array.from(out) : null;
}
