// The LEB128 codec every wasm walk in berm shares: boundaries, refusals and where they point.
import { describe, expect, it } from 'vitest';
import { encodeU32, readU32, readU64 } from '@berm/manifest';
import { seededRandom } from '../../../test/helpers/random.js';
import { expectCode, manifestError } from './support.js';

const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);

describe('readU32', () => {
  it('reads the boundaries of each encoded length, and says where the next field starts', () => {
    const cases: [number[], number][] = [
      [[0x00], 0],
      [[0x7f], 127],
      [[0x80, 0x01], 128],
      [[0xff, 0x7f], 16383],
      [[0x80, 0x80, 0x01], 16384],
      [[0xff, 0xff, 0x7f], 2 ** 21 - 1],
      [[0x80, 0x80, 0x80, 0x01], 2 ** 21],
      [[0xff, 0xff, 0xff, 0x7f], 2 ** 28 - 1],
      [[0x80, 0x80, 0x80, 0x80, 0x01], 2 ** 28],
      [[0xff, 0xff, 0xff, 0xff, 0x0f], 0xffffffff],
    ];
    for (const [encoded, value] of cases) {
      // Two bytes before and one after, to show the offset and the end are honoured.
      const framed = bytes(0xaa, 0xbb, ...encoded, 0xcc);
      expect(readU32(framed, 2)).toEqual({ value, next: 2 + encoded.length });
    }
  });

  it('reads the largest u32 as a positive number, not a negative int32', () => {
    const { value } = readU32(bytes(0xff, 0xff, 0xff, 0xff, 0x0f), 0);
    expect(value).toBe(4294967295);
    expect(value).toBeGreaterThan(0);
  });

  it('takes padded encodings up to five bytes, as the wasm spec allows', () => {
    expect(readU32(bytes(0x80, 0x00), 0)).toEqual({ value: 0, next: 2 });
    expect(readU32(bytes(0x85, 0x80, 0x80, 0x80, 0x00), 0)).toEqual({ value: 5, next: 5 });
  });

  it('bad-module: a fifth byte above 0x0f, whether it sets bits past 32 or continues to a sixth byte', () => {
    for (const encoded of [
      bytes(0xff, 0xff, 0xff, 0xff, 0x1f),
      bytes(0x80, 0x80, 0x80, 0x80, 0x80, 0x00),
      bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
    ]) {
      const framed = Uint8Array.from([0x01, 0x02, 0x03, ...encoded]);
      const error = manifestError(() => readU32(framed, 3));
      expectCode(error, 'bad-module');
      expect(error.offset).toBe(3);
      expect(error.message).toContain('byte 3');
    }
  });

  it('truncated: the bytes end inside the integer, at the end of the array or at the `end` given', () => {
    for (const [framed, end] of [
      [bytes(0x00, 0x80), 2],
      [bytes(0x00, 0xff, 0xff, 0xff, 0xff), 5],
      [bytes(0x00, 0x80, 0x80, 0x01), 3], // complete in the array, but its frame ends first
      [bytes(0x00), 1], // nothing at all to read
    ] as const) {
      const error = manifestError(() => readU32(framed, 1, end));
      expectCode(error, 'truncated');
      expect(error.offset).toBe(1);
    }
  });

  it('reads back what encodeU32 writes, for seeded random values of every size', () => {
    const random = seededRandom(0x1eb128);
    for (let i = 0; i < 2000; i++) {
      const value = Math.floor(random() * 2 ** (1 + Math.floor(random() * 32)));
      const encoded = encodeU32(value);
      expect(readU32(encoded, 0)).toEqual({ value, next: encoded.length });
    }
  });
});

describe('encodeU32', () => {
  it('writes the shortest encoding: one byte per 7 bits', () => {
    expect(Array.from(encodeU32(0))).toEqual([0x00]);
    expect(Array.from(encodeU32(127))).toEqual([0x7f]);
    expect(Array.from(encodeU32(128))).toEqual([0x80, 0x01]);
    expect(Array.from(encodeU32(624485))).toEqual([0xe5, 0x8e, 0x26]);
    expect(Array.from(encodeU32(0xffffffff))).toEqual([0xff, 0xff, 0xff, 0xff, 0x0f]);
    for (let bits = 1; bits <= 32; bits++) expect(encodeU32(2 ** bits - 1).length).toBe(Math.ceil(bits / 7));
  });

  it('refuses what is not a u32 with a RangeError', () => {
    for (const value of [-1, 2 ** 32, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => encodeU32(value)).toThrow(RangeError);
    }
  });
});

describe('readU64', () => {
  it('reads what readU32 reads, and memory64 sizes past 32 bits', () => {
    for (const value of [0, 1, 127, 128, 65536, 0xffffffff]) {
      const encoded = encodeU32(value);
      expect(readU64(encoded, 0)).toEqual(readU32(encoded, 0));
    }
    // 2^32 pages' worth of bytes: past any u32, well inside 2^53.
    expect(readU64(bytes(0x80, 0x80, 0x80, 0x80, 0x10), 0)).toEqual({ value: 2 ** 32, next: 5 });
    expect(readU64(bytes(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40), 0)).toEqual({ value: 2 ** 48, next: 7 });
  });

  it('is exact up to 2^53 - 1', () => {
    const max = bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f);
    expect(readU64(max, 0)).toEqual({ value: Number.MAX_SAFE_INTEGER, next: 8 });
  });

  it('takes the largest u64 in ten bytes, and nothing wider', () => {
    const largest = bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
    const read = readU64(largest, 0);
    expect(read.next).toBe(10);
    expect(read.value).toBe(2 ** 64); // 2^64 - 1, rounded to the nearest double
    for (const wider of [
      bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02),
      bytes(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00),
    ]) {
      const error = manifestError(() => readU64(Uint8Array.from([0, ...wider]), 1));
      expectCode(error, 'bad-module');
      expect(error.offset).toBe(1);
    }
  });

  it('truncated: the bytes end inside the integer', () => {
    const error = manifestError(() => readU64(bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff), 0));
    expectCode(error, 'truncated');
    expect(error.offset).toBe(0);
    expectCode(
      manifestError(() => readU64(bytes(0x80, 0x80, 0x01), 0, 2)),
      'truncated',
    );
  });
});
