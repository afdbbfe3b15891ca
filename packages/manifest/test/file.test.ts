import { mkdir, mkdtemp, open, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Manifest, ManifestError, readManifestFile } from '@berm/manifest';
import { buildElf } from '../../../test/helpers/elf.js';
import { buildImage, sampleManifest, wat2wasm } from '../../../test/helpers/wat.js';
import { encoder, manifestError, manifestErrorAsync, withSection } from './support.js';

let dir: string;
let serial = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'berm-manifest-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(bytes: Uint8Array): Promise<string> {
  const path = join(dir, `image-${serial++}.wasm`);
  await writeFile(path, bytes);
  return path;
}

/** Counts what every FileHandle reads while `fn` runs, by wrapping the methods on their prototype. */
async function countingReads<T>(fn: () => Promise<T>): Promise<{ result: T; bytes: number; calls: number; wholeFileReads: number }> {
  const probe = await open(await file(new Uint8Array(1)), 'r');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const read = proto.read;
  const readFile = proto.readFile;
  let bytes = 0;
  let calls = 0;
  let wholeFileReads = 0;
  proto.read = async function (this: FileHandle, ...args: unknown[]) {
    const answer = await (read as (...a: unknown[]) => Promise<{ bytesRead: number }>).apply(this, args);
    bytes += answer.bytesRead;
    calls++;
    return answer;
  } as FileHandle['read'];
  proto.readFile = function (this: FileHandle, ...args: unknown[]) {
    wholeFileReads++;
    return (readFile as (...a: unknown[]) => unknown).apply(this, args);
  } as FileHandle['readFile'];
  try {
    return { result: await fn(), bytes, calls, wholeFileReads };
  } finally {
    proto.read = read;
    proto.readFile = readFile;
  }
}

/** The outcome of reading as plain data, so the file path and the memory path can be compared. */
function outcome(run: () => Manifest): unknown {
  try {
    return { data: run().data };
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    return e.toJSON();
  }
}

async function outcomeOfFile(path: string): Promise<unknown> {
  try {
    return { data: (await readManifestFile(path)).data };
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    return e.toJSON();
  }
}

const BIG_WAT = (dataBytes: number) => `(module
  (memory (export "memory") ${Math.ceil(dataBytes / 65536) + 1})
  (func (export "berm_tool_fill") (param $ptr i32) (param $len i32) (result i64)
    (memory.fill (local.get $ptr) (i32.const 0) (local.get $len))
    (memory.copy (i32.const 0) (local.get $ptr) (local.get $len))
    (i64.const 0))
  (data (i32.const 0) "${'berm'.repeat(dataBytes / 4)}"))`;

describe('readManifestFile', () => {
  it('reads wasm images from disk as fromImage reads them from memory', async () => {
    const m = sampleManifest({ events: [{ name: 'e', description: 'd', fields: true }] });
    const image = withSection(await buildImage('(module)', m, { separator: '\0\n' }), '{"event":{"name":"f","fields":false}}');
    const manifest = await readManifestFile(await file(image));
    expect(manifest).toBeInstanceOf(Manifest);
    expect(manifest.data).toEqual(Manifest.fromImage(image).data);
    expect(manifest.events.map((e) => e.name)).toEqual(['e', 'f']);
  });

  it.each([32, 64] as const)('reads %i-bit ELF files in both byte orders', async (bits) => {
    for (const endian of ['little', 'big'] as const) {
      const stream = encoder.encode('{"abi_version":1,"usage":"elf"}\0\0{"event":{"name":"e","fields":true}}');
      const { bytes } = buildElf({
        bits,
        endian,
        sections: [
          { name: '.text', data: new Uint8Array(100) },
          { name: '.berm.abi', data: stream },
        ],
      });
      const manifest = await readManifestFile(await file(bytes));
      expect(manifest.data.usage).toBe('elf');
      expect(manifest.events.map((e) => e.name)).toEqual(['e']);
    }
  });

  it('reads only the frames and the manifest of a big image, not its code and data', async () => {
    const m = sampleManifest({ usage: 'big' });
    const image = await buildImage(BIG_WAT(8 * 1024 * 1024), m);
    expect(image.length).toBeGreaterThan(8 * 1024 * 1024);
    await WebAssembly.compile(image);
    const path = await file(image);
    const { result, bytes, calls, wholeFileReads } = await countingReads(() => readManifestFile(path));
    expect(result.data).toEqual(m);
    expect(wholeFileReads).toBe(0);
    expect(calls).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(image.length / 50);
    // Walking past an 8 MB section costs no more than walking past a small one.
    const small = await file(await buildImage(BIG_WAT(64 * 1024), m));
    const smallRead = await countingReads(() => readManifestFile(small));
    expect(calls).toBeLessThanOrEqual(smallRead.calls + 1);
  });

  it('reads a manifest bigger than the read-ahead window whole', async () => {
    const readme = `# Readme\n\n${'A line of documentation.\n'.repeat(8000)}`;
    const m = sampleManifest({ readme });
    const path = await file(await buildImage('(module)', m));
    expect((await readManifestFile(path)).data.readme).toBe(readme);
  });

  it('gives the same errors, codes and offsets as the memory path', async () => {
    const good = await buildImage('(module)', sampleManifest());
    const cases = [
      new Uint8Array(0),
      encoder.encode('#!/bin/sh\necho not an image\n'),
      Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00),
      good.subarray(0, good.length - 3),
      await wat2wasm('(module)'),
      withSection(await wat2wasm('(module)'), '{"abi_version":1} [1]'),
      withSection(await wat2wasm('(module)'), '{"abi_version":1,"tools":[{"name":"a b","arguments":true}]}'),
    ];
    const codes: string[] = [];
    for (const bytes of cases) {
      const expected = outcome(() => Manifest.fromImage(bytes));
      const actual = await outcomeOfFile(await file(bytes));
      expect(actual).toEqual(expected);
      codes.push((actual as { code: string }).code);
    }
    expect(codes).toEqual([
      'not-an-image',
      'not-an-image',
      'component-not-supported',
      'truncated',
      'no-manifest',
      'bad-record',
      'invalid-manifest',
    ]);
  });

  it('lets filesystem errors through with their Node code', async () => {
    const missing = await readManifestFile(join(dir, 'does-not-exist.wasm')).catch((e: unknown) => e);
    expect(missing).not.toBeInstanceOf(ManifestError);
    expect((missing as NodeJS.ErrnoException).code).toBe('ENOENT');
    const folder = join(dir, 'a-directory');
    await mkdir(folder);
    const directory = await readManifestFile(folder).catch((e: unknown) => e);
    expect(directory).not.toBeInstanceOf(ManifestError);
    expect((directory as NodeJS.ErrnoException).code).toBe('EISDIR');
  });

  it('reads a device that has no size as a whole (here: /dev/null, which is empty)', async () => {
    const error = await manifestErrorAsync(() => readManifestFile('/dev/null'));
    expect(error.code).toBe('not-an-image');
    expect(manifestError(() => Manifest.fromImage(new Uint8Array(0))).message).toBe(error.message);
  });
});
