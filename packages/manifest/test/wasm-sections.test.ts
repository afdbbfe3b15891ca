// The section frames every wasm walk in berm shares: what they locate in real modules, and how a
// malformed frame is refused.
import { describe, expect, it } from 'vitest';
import { customSection, customSectionName, MAX_SECTION_HEADER, moduleSections, sectionFrame, type SectionFrame } from '@berm/manifest';
import { wat2wasm } from '../../../test/helpers/wat.js';
import { concat, encoder, expectCode, manifestError } from './support.js';

const HEADER = Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00);

const WAT = `(module
  (type (func (param i32 i32) (result i64)))
  (import "berm" "log" (func (type 0)))
  (memory (export "memory") 1 4)
  (func (export "berm_tool_echo") (type 0) (i64.const 7))
  (data (i32.const 0) "hello"))`;

const module = (...sections: Uint8Array[]): Uint8Array => concat(HEADER, ...sections);
const all = (bytes: Uint8Array): SectionFrame[] => [...moduleSections(bytes)];

describe('moduleSections', () => {
  it('frames the sections of a real module end to end, with the ids V8 compiles them as', async () => {
    const base = await wat2wasm(WAT);
    const bytes = concat(base, customSection('first', encoder.encode('one')), customSection('second', encoder.encode('')));
    const frames = all(bytes);
    // type, import, function, memory, export, code, data, then the two custom sections.
    expect(frames.map((f) => f.id)).toEqual([1, 2, 3, 5, 7, 10, 11, 0, 0]);
    let at = 8;
    for (const f of frames) {
      expect(f.start).toBe(at);
      expect(f.bodyStart).toBeGreaterThan(f.start + 1);
      expect(f.bodyEnd).toBeGreaterThanOrEqual(f.bodyStart);
      at = f.bodyEnd;
    }
    expect(at).toBe(bytes.length);
    // The custom sections' payloads, as V8 itself finds them.
    const compiled = new WebAssembly.Module(bytes);
    for (const [index, name] of [
      [7, 'first'],
      [8, 'second'],
    ] as const) {
      const frame = frames[index]!;
      const { nameStart, nameEnd } = customSectionName(bytes, frame);
      expect(new TextDecoder().decode(bytes.subarray(nameStart, nameEnd))).toBe(name);
      const fromV8 = new Uint8Array(WebAssembly.Module.customSections(compiled, name)[0]!);
      expect(bytes.subarray(nameEnd, frame.bodyEnd)).toEqual(fromV8);
    }
  });

  it('an empty module (the header alone) has no sections, nor has anything shorter', () => {
    expect(all(HEADER)).toEqual([]);
    expect(all(HEADER.subarray(0, 5))).toEqual([]);
    expect(all(new Uint8Array(0))).toEqual([]);
  });

  it('frames an empty section and a section whose size is padded to five bytes', () => {
    const bytes = module(Uint8Array.of(12, 0x00), Uint8Array.of(12, 0x81, 0x80, 0x80, 0x80, 0x00, 0x00));
    expect(all(bytes)).toEqual([
      { id: 12, start: 8, bodyStart: 10, bodyEnd: 10 },
      { id: 12, start: 10, bodyStart: 16, bodyEnd: 17 },
    ]);
  });

  it('truncated: the module ends on a section id, or inside its size', () => {
    for (const tail of [Uint8Array.of(1), Uint8Array.of(1, 0x80), Uint8Array.of(0, 0xff, 0xff, 0xff, 0xff)]) {
      const error = manifestError(() => all(module(tail)));
      expectCode(error, 'truncated');
      expect(error.offset).toBe(8);
      expect(error.message).toContain('byte 8');
    }
  });

  it('truncated: a section size past the end of the module, naming the section and its claim', () => {
    const bytes = module(Uint8Array.of(1, 0x00), Uint8Array.of(5, 0x04, 0x01, 0x00));
    const error = manifestError(() => all(bytes));
    expectCode(error, 'truncated');
    expect(error.offset).toBe(10);
    expect(error.message).toBe(`the memory section at byte 10 claims 4 bytes, past the end of the image (${bytes.length} bytes)`);
    // The largest u32 as a size: the claim is read in full, not wrapped to a negative int32.
    const inflated = manifestError(() => all(module(Uint8Array.of(0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00))));
    expectCode(inflated, 'truncated');
    expect(inflated.message).toContain('4294967295');
  });

  it('bad-module: a section size that is not a LEB128 u32', () => {
    for (const size of [
      [0x80, 0x80, 0x80, 0x80, 0x10],
      [0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ]) {
      const error = manifestError(() => all(module(Uint8Array.of(0, ...size, 0, 0, 0))));
      expectCode(error, 'bad-module');
      expect(error.offset).toBe(8);
    }
  });

  it('yields each section before reading the next: a caller that stops early is never refused for what follows', () => {
    const bytes = module(Uint8Array.of(5, 0x03, 0x01, 0x00, 0x01), Uint8Array.of(7, 0x7f));
    const iterator = moduleSections(bytes);
    expect(iterator.next().value).toEqual({ id: 5, start: 8, bodyStart: 10, bodyEnd: 13 });
    expectCode(
      manifestError(() => iterator.next()),
      'truncated',
    );
  });
});

describe('sectionFrame', () => {
  it('frames a section from a window read at its start as from the whole module', async () => {
    const bytes = concat(await wat2wasm(WAT), customSection('.berm.abi', encoder.encode('{}')));
    for (const frame of all(bytes)) {
      const window = bytes.slice(frame.start, Math.min(frame.start + MAX_SECTION_HEADER, bytes.length));
      expect(sectionFrame(window, frame.start, bytes.length, frame.start)).toEqual(frame);
      expect(sectionFrame(bytes, frame.start, bytes.length)).toEqual(frame);
    }
  });

  it('refuses from a window with the offsets of the module, not of the window', () => {
    const bytes = module(Uint8Array.of(1, 0x00), Uint8Array.of(0, 0x09, 0x00));
    const error = manifestError(() => sectionFrame(bytes.slice(10), 10, bytes.length, 10));
    expectCode(error, 'truncated');
    expect(error.offset).toBe(10);
    const cut = manifestError(() => sectionFrame(Uint8Array.of(0, 0x80), 10, 12, 10));
    expectCode(cut, 'truncated');
    expect(cut.offset).toBe(10);
  });
});

describe('customSectionName', () => {
  it('locates the name and, after it, the payload', () => {
    const bytes = module(customSection('.berm.abi', encoder.encode('{"a":1}')));
    const [frame] = all(bytes);
    expect(customSectionName(bytes, frame!)).toEqual({ nameStart: 11, nameEnd: 20 });
    expect(new TextDecoder().decode(bytes.subarray(20, frame!.bodyEnd))).toBe('{"a":1}');
    // From a window of the body's first bytes, with the module's offsets.
    expect(customSectionName(bytes.slice(frame!.bodyStart, frame!.bodyStart + 5), frame!, frame!.bodyStart)).toEqual({
      nameStart: 11,
      nameEnd: 20,
    });
  });

  it('bad-module: an empty custom section has no name length to read', () => {
    const bytes = module(Uint8Array.of(0, 0x00), Uint8Array.of(1, 0x00));
    const [frame] = all(bytes);
    const error = manifestError(() => customSectionName(bytes, frame!));
    expectCode(error, 'bad-module');
    expect(error.offset).toBe(10);
    // The next section's bytes are not taken for the name's length.
    expect(frame!.bodyEnd).toBe(10);
  });

  it('bad-module: a name longer than its section, with the offset of the name', () => {
    const bytes = module(Uint8Array.of(0, 0x03, 0x28, 0x2e, 0x62), Uint8Array.of(1, 0x00));
    const [frame] = all(bytes);
    const error = manifestError(() => customSectionName(bytes, frame!));
    expectCode(error, 'bad-module');
    expect(error.offset).toBe(11);
  });
});
