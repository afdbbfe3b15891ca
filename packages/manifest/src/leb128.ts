import { ManifestError } from './errors.js';

/*
 * Unsigned LEB128, the integer encoding of every count, index and size in a WebAssembly binary.
 * The readers take an `end` that bounds the read, so a hostile length cannot run past its frame,
 * and they refuse encodings longer than the type allows instead of wrapping around.
 */

/**
 * Decodes an unsigned LEB128 u32 at `offset`. Throws `ManifestError` `truncated` when the bytes
 * end (at `end`) inside it and `bad-module` when it does not fit in 32 bits; both carry `offset`.
 */
export function readU32(bytes: Uint8Array, offset: number, end: number = bytes.length): { value: number; next: number } {
  const read = peekU32(bytes, offset, end);
  if (read === 'incomplete') throw runsPast(offset);
  if (read === 'overlong') throw tooWide(offset, 32);
  return read;
}

/**
 * Decodes an unsigned LEB128 u64 (up to 10 bytes) at `offset`, for the fields memory64 widens
 * (memory limits). The value is a `number`: exact up to 2^53 - 1 and rounded above, which is enough
 * for sizes that are only compared or skipped. Throws like `readU32`.
 */
export function readU64(bytes: Uint8Array, offset: number, end: number = bytes.length): { value: number; next: number } {
  let result = 0;
  let scale = 1;
  let pos = offset;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw runsPast(offset);
    const byte = bytes[pos++]!;
    if (i === 9 && byte > 0x01) throw tooWide(offset, 64);
    result += (byte & 0x7f) * scale;
    scale *= 128;
    if ((byte & 0x80) === 0) return { value: result, next: pos };
  }
  // Unreachable: a tenth byte that continues is above 0x01.
  throw tooWide(offset, 64);
}

/*
 * The errors are built out of line: measured, with the messages written inline in `readU64` a read
 * cost about five times as much, its `{ value, next }` answer no longer optimised away.
 */
function runsPast(offset: number): ManifestError {
  return new ManifestError('truncated', `LEB128 integer at byte ${offset} runs past the end of its frame`, { offset });
}

function tooWide(offset: number, bits: number): ManifestError {
  return new ManifestError('bad-module', `LEB128 integer at byte ${offset} does not fit in ${bits} bits`, { offset });
}

/** The shortest LEB128 encoding of the u32 `value`; a value that is not a u32 is a `RangeError` (a caller's bug, not bad input). */
export function encodeU32(value: number): Uint8Array {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`not a u32: ${value}`);
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return Uint8Array.from(out);
}

/**
 * Decodes an unsigned LEB128 u32 at `offset` without throwing, for readers that must tell
 * "the bytes ran out" (`incomplete`) from "these bytes are not a u32" (`overlong`) themselves.
 */
export function peekU32(
  bytes: Uint8Array,
  offset: number,
  end: number = bytes.length,
): { value: number; next: number } | 'incomplete' | 'overlong' {
  let result = 0;
  // A running product, not 2 ** (7 * i): measured, that power made each integer several times
  // slower to read.
  let scale = 1;
  let pos = offset;
  for (let i = 0; i < 5; i++) {
    if (pos >= end) return 'incomplete';
    const byte = bytes[pos++]!;
    if (i === 4 && byte > 0x0f) return 'overlong';
    result += (byte & 0x7f) * scale;
    scale *= 128;
    if ((byte & 0x80) === 0) return { value: result, next: pos };
  }
  // Unreachable: a fifth byte that continues is above 0x0f.
  return 'overlong';
}
