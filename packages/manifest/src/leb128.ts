import { ManifestError } from './errors.js';

/** Decodes an unsigned LEB128 u32 at `offset`; `end` bounds the read so a hostile length cannot run past its frame. */
export function readU32(bytes: Uint8Array, offset: number, end: number = bytes.length): { value: number; next: number } {
  let result = 0;
  let shift = 0;
  let pos = offset;
  for (let i = 0; i < 5; i++) {
    if (pos >= end) {
      throw new ManifestError('truncated', `LEB128 integer at byte ${offset} runs past the end of its frame`, { offset });
    }
    const byte = bytes[pos++]!;
    if (i === 4 && byte > 0x0f) {
      throw new ManifestError('not-an-image', `LEB128 integer at byte ${offset} does not fit in 32 bits`, { offset });
    }
    result += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return { value: result, next: pos };
  }
  throw new ManifestError('not-an-image', `LEB128 integer at byte ${offset} is longer than 5 bytes`, { offset });
}

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
  let pos = offset;
  for (let i = 0; i < 5; i++) {
    if (pos >= end) return 'incomplete';
    const byte = bytes[pos++]!;
    if (i === 4 && byte > 0x0f) return 'overlong';
    result += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return { value: result, next: pos };
  }
  return 'overlong';
}
