// Mutation fuzzing of the image reader: every mutated image must read as a Manifest or fail with a
// ManifestError, never anything else, and the file path must agree with the memory path.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Manifest, ManifestError, readManifestFile, type ManifestErrorCode } from '@berm/manifest';
import { buildElf, elfLayout } from '../../../test/helpers/elf.js';
import { buildImage, sampleManifest } from '../../../test/helpers/wat.js';
import { concat, encoder, withSection } from './support.js';
import { seededRandom as prng } from '../../../test/helpers/random.js';

const CODES: readonly ManifestErrorCode[] = [
  'not-an-image',
  'component-not-supported',
  'truncated',
  'no-manifest',
  'bad-record',
  'invalid-manifest',
  'bad-module',
];

type Outcome = { ok: true; data: unknown } | { ok: false; code: string; offset?: number; path?: string; message: string };

/** Reads `bytes`, failing the test on any exception that is not a well-formed ManifestError. */
function read(bytes: Uint8Array): Outcome {
  try {
    const manifest = Manifest.fromImage(bytes);
    expect(manifest).toBeInstanceOf(Manifest);
    return { ok: true, data: manifest.data };
  } catch (e) {
    if (!(e instanceof ManifestError)) {
      throw new Error(`a non-ManifestError escaped for ${Buffer.from(bytes).toString('base64')}: ${String(e)}`);
    }
    expect(CODES).toContain(e.code);
    expect(e.message.length).toBeGreaterThan(0);
    if (e.offset !== undefined) {
      expect(Number.isInteger(e.offset) && e.offset >= 0 && e.offset <= bytes.length).toBe(true);
    }
    return { ok: false, ...e.toJSON() };
  }
}

async function readFromFile(path: string): Promise<Outcome> {
  try {
    return { ok: true, data: (await readManifestFile(path)).data };
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    return { ok: false, ...e.toJSON() };
  }
}

/** Offsets of the top-level section sizes of a wasm module (and of custom section name lengths). */
function wasmLebs(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let pos = 8;
  while (pos < bytes.length) {
    const id = bytes[pos]!;
    const sizeAt = pos + 1;
    let size = 0;
    let p = sizeAt;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[p++]!;
      size += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) break;
    }
    out.push(sizeAt);
    if (id === 0) out.push(p);
    pos = p + size;
  }
  return out;
}

function encodeU32(value: number): Uint8Array {
  const out: number[] = [];
  do {
    out.push((value & 0x7f) | (value >= 0x80 ? 0x80 : 0));
    value = Math.floor(value / 0x80);
  } while (value > 0);
  return Uint8Array.from(out);
}

/** `bytes` with the LEB128 at `at` replaced by `replacement` (which may be longer or shorter). */
function replaceLeb(bytes: Uint8Array, at: number, replacement: Uint8Array): Uint8Array {
  let end = at;
  while (bytes[end]! & 0x80) end++;
  return concat(bytes.subarray(0, at), replacement, bytes.subarray(end + 1));
}

function setUint(bytes: Uint8Array, at: number, width: 1 | 2 | 4 | 8, value: number, little: boolean): Uint8Array {
  const copy = bytes.slice();
  const view = new DataView(copy.buffer);
  if (width === 1) view.setUint8(at, value & 0xff);
  else if (width === 2) view.setUint16(at, value & 0xffff, little);
  else if (width === 4) view.setUint32(at, value >>> 0, little);
  else view.setBigUint64(at, BigInt(Math.min(value, Number.MAX_SAFE_INTEGER)), little);
  return copy;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'berm-fuzz-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('mutated images', () => {
  it('read as a Manifest or fail with a ManifestError, the same from a file', async () => {
    const random = prng(0xbe7a_0001);
    const int = (n: number) => Math.floor(random() * n);
    const manifest = sampleManifest({
      events: [{ name: 'fetched', description: 'd', fields: { type: 'object', properties: { n: { type: 'integer', minimum: 0 } } } }],
      deps: { programs: ['other'], syscalls: { 'berm.http.fetch': ['example.com'] }, secrets: [] },
    });
    const wasm = await buildImage(
      '(module (memory 1) (func (export "f") (memory.fill (i32.const 0) (i32.const 1) (i32.const 8))))',
      manifest,
      { separator: '\0\0\n' },
    );
    const twoSections = withSection(withSection(wasm, 'x', 'other'), '\0{"event":{"name":"late","fields":true}}');
    const stream = encoder.encode(`${JSON.stringify({ ...manifest, events: [] })}\0\0{"event":${JSON.stringify(manifest.events[0])}}`);
    const elves = ([32, 64] as const).flatMap((bits) =>
      (['little', 'big'] as const).map((endian) => ({
        bits,
        little: endian === 'little',
        ...buildElf({
          bits,
          endian,
          sections: [
            { name: '.text', data: new Uint8Array(24) },
            { name: '.berm.abi', data: stream },
          ],
        }),
      })),
    );

    const cases: Uint8Array[] = [];
    const bases = [wasm, twoSections, ...elves.map((e) => e.bytes)];
    for (const base of bases) {
      expect(read(base).ok).toBe(true);
      // Truncated at every point: inside headers, frames, names, records.
      for (let cut = 0; cut < base.length; cut++) cases.push(base.subarray(0, cut));
      // Random bytes replaced, one to four at a time.
      for (let i = 0; i < 400; i++) {
        const copy = base.slice();
        for (let k = 1 + int(4); k > 0; k--) copy[int(copy.length)] = int(256);
        cases.push(copy);
      }
    }
    // Section sizes and name lengths inflated, shrunk, zeroed or made overlong.
    for (const base of [wasm, twoSections]) {
      for (const at of wasmLebs(base)) {
        for (const value of [0, 1, 9, 0x7f, 0x80, 0xffff, 0xffff_ffff, int(0x1_0000_0000), base.length, base.length - at]) {
          cases.push(replaceLeb(base, at, encodeU32(value)));
        }
        cases.push(replaceLeb(base, at, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x7f)));
        cases.push(replaceLeb(base, at, Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00)));
      }
    }
    // ELF header and section header fields corrupted.
    for (const { bits, little, bytes, layout } of elves) {
      const fields = elfLayout(bits);
      const word = bits === 64 ? 8 : 4;
      const entry = (i: number) => layout.tableOffset + i * layout.entrySize;
      const targets: [number, 1 | 2 | 4 | 8][] = [
        [4, 1],
        [5, 1],
        [fields.shoff, word],
        [fields.shentsize, 2],
        [fields.shnum, 2],
        [fields.shstrndx, 2],
      ];
      for (let i = 0; i < 4; i++) {
        targets.push([entry(i), 4], [entry(i) + 4, 4]);
        targets.push([entry(i) + (bits === 64 ? 0x18 : 0x10), word], [entry(i) + (bits === 64 ? 0x20 : 0x14), word]);
        targets.push([entry(i) + (bits === 64 ? 0x28 : 0x18), 4]);
      }
      for (const [at, width] of targets) {
        for (const value of [
          0,
          1,
          2,
          3,
          8,
          0xff,
          0xffff,
          0xff00,
          0xffff_ffff,
          bytes.length,
          bytes.length - 1,
          layout.tableOffset,
          int(0x1_0000_0000),
          2 ** 53,
        ]) {
          cases.push(setUint(bytes, at, width, value, little));
        }
      }
    }

    const seen = new Map<string, number>();
    const sampled: Uint8Array[] = [];
    cases.forEach((bytes, i) => {
      const outcome = read(bytes);
      const key = outcome.ok ? 'manifest' : outcome.code;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      if (i % 23 === 0) sampled.push(bytes);
    });

    expect(cases.length).toBeGreaterThan(5000);
    // The mutations reach every kind of failure, and some still read.
    for (const key of ['manifest', 'not-an-image', 'truncated', 'no-manifest', 'bad-record', 'invalid-manifest', 'bad-module']) {
      expect(seen.get(key), `${key} in ${JSON.stringify([...seen])}`).toBeGreaterThan(0);
    }

    // The file path runs the same walk through positioned reads: it must agree case by case.
    const path = join(dir, 'mutant.bin');
    for (const bytes of sampled) {
      await writeFile(path, bytes);
      expect(await readFromFile(path)).toEqual(read(bytes));
    }
  });
});
