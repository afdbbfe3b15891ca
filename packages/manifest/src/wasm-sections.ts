import { ManifestError } from './errors.js';
import { peekU32 } from './leb128.js';

/*
 * The section frames of a WebAssembly core module: after the 8-byte header, sections back to back,
 * each an id byte, a LEB128 u32 body size and the body. Everything in berm that walks a module
 * decodes the frames here, so a malformed frame is refused the same way (same codes, same offsets)
 * whoever reads it: the `.berm.abi` walk, which reads through positioned reads and hands
 * `sectionFrame` the few bytes it fetched, and the writer and the daemon, which hold the whole
 * module and iterate with `moduleSections`.
 */

const SECTION_NAMES = [
  'custom',
  'type',
  'import',
  'function',
  'table',
  'memory',
  'global',
  'export',
  'start',
  'element',
  'code',
  'data',
  'data count',
  'tag',
];

/** One id byte and at most five bytes of LEB128 size: what a reader must fetch to frame a section. */
export const MAX_SECTION_HEADER = 6;

/** Where one section lies, in offsets from the start of the module. */
export interface SectionFrame {
  /** The section id: 0 for a custom section, 1 type, 2 import, 3 function, 5 memory, 7 export... */
  id: number;
  /** The offset of the id byte. */
  start: number;
  /** The offset of the body's first byte, just past the size. */
  bodyStart: number;
  /** The offset just past the body; never past the end of the module. */
  bodyEnd: number;
}

/**
 * Decodes the frame of the section whose id byte is at offset `start` of a module of `size` bytes.
 * `bytes` holds the module from offset `origin` on: the whole module (`origin` 0), or a window read
 * at `start` (`origin` = `start`) of at least min(MAX_SECTION_HEADER, size - start) bytes.
 *
 * Throws `ManifestError`, with `offset` = `start`: `truncated` when the size runs past the end of the
 * module or the body does, `bad-module` when the size is not a LEB128 u32.
 */
export function sectionFrame(bytes: Uint8Array, start: number, size: number, origin = 0): SectionFrame {
  const at = start - origin;
  const id = bytes[at]!;
  const length = peekU32(bytes, at + 1, Math.min(bytes.length, size - origin));
  if (length === 'incomplete') {
    throw new ManifestError('truncated', `section header at byte ${start} runs past the end of the image (${size} bytes)`, {
      offset: start,
    });
  }
  if (length === 'overlong') {
    throw new ManifestError('bad-module', `section at byte ${start} has a size that is not a LEB128 u32`, { offset: start });
  }
  const bodyStart = origin + length.next;
  const bodyEnd = bodyStart + length.value;
  if (bodyEnd > size) {
    throw new ManifestError(
      'truncated',
      `the ${SECTION_NAMES[id] ?? `id ${id}`} section at byte ${start} claims ${length.value} bytes, past the end of the image (${size} bytes)`,
      { offset: start },
    );
  }
  return { id, start, bodyStart, bodyEnd };
}

/**
 * The frames of the sections of the module `bytes`, in file order, each decoded when the iteration
 * reaches it: a caller that stops early never reads (nor refuses) what follows. The 8-byte header
 * is the caller's to check, since each caller refuses a wrong one in its own terms; a module of 8
 * bytes or fewer has no sections. Throws as `sectionFrame`.
 */
export function moduleSections(bytes: Uint8Array): IterableIterator<SectionFrame> {
  return new SectionIterator(bytes);
}

/** A plain iterator, not a generator: measured, resuming a generator cost about three times as much as decoding the frame. */
class SectionIterator implements IterableIterator<SectionFrame> {
  private pos = 8;

  constructor(private readonly bytes: Uint8Array) {}

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<SectionFrame, undefined> {
    if (this.pos >= this.bytes.length) return { done: true, value: undefined };
    const frame = sectionFrame(this.bytes, this.pos, this.bytes.length);
    this.pos = frame.bodyEnd;
    return { done: false, value: frame };
  }
}

/**
 * Where the name of the custom section `section` lies: its bytes are [nameStart, nameEnd), and the
 * payload follows up to `section.bodyEnd`. `bytes` holds the module from offset `origin` on, as for
 * `sectionFrame`; a window read at `section.bodyStart` needs at most five bytes (the name's length).
 *
 * Throws `ManifestError` `bad-module` when the name's length cannot be read inside the section
 * (offset: the body) or the name runs past the end of the section (offset: the name).
 */
export function customSectionName(bytes: Uint8Array, section: SectionFrame, origin = 0): { nameStart: number; nameEnd: number } {
  const at = section.bodyStart - origin;
  const nameLength = peekU32(bytes, at, Math.min(bytes.length, section.bodyEnd - origin));
  if (typeof nameLength === 'string') {
    throw new ManifestError('bad-module', `custom section at byte ${section.start} has no readable name length`, {
      offset: section.bodyStart,
    });
  }
  const nameStart = origin + nameLength.next;
  const nameEnd = nameStart + nameLength.value;
  if (nameEnd > section.bodyEnd) {
    throw new ManifestError('bad-module', `the name of the custom section at byte ${section.start} runs past the end of the section`, {
      offset: nameStart,
    });
  }
  return { nameStart, nameEnd };
}
