import { ManifestError } from './errors.js';
import { peekU32 } from './leb128.js';
import { read, type Reader } from './source.js';
import { SECTION_NAME } from './writer.js';

/*
 * Why a hand-written walk and not @webassemblyjs/wasm-parser: measured, its decode fails on current
 * code (`Unexpected instruction: 0xfc06`, i64.trunc_sat_f64_s, a saturating float-to-int),
 * takes 110-250 ms on 14-18 MB binaries even with the code and data sections ignored (about 140 ms
 * on bench/manifest.js's 20 MB image, against ~0.03 ms here), and drops the names of custom
 * sections, which are exactly what this reader looks for. Reading the manifest only needs the
 * section frames: an id, a LEB128 size, and for custom sections a name. Bodies are skipped, so the
 * cost follows the number of sections, not their size. The decoder stays a dev dependency, for that
 * benchmark only.
 */

const NAME = new TextEncoder().encode(SECTION_NAME);
const SECTION_NAMES = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'data count', 'tag'];

/** One id byte and at most five bytes of LEB128 size. */
const MAX_SECTION_HEADER = 6;

/**
 * Walks the sections of a core module of `size` bytes whose 8-byte header has been checked, and
 * returns the bodies of every `.berm.abi` custom section in file order.
 */
export function* wasmSections(size: number): Reader<Uint8Array[]> {
  const found: Uint8Array[] = [];
  let pos = 8;
  while (pos < size) {
    const start = pos;
    const head = yield* read(pos, Math.min(MAX_SECTION_HEADER, size - pos));
    const id = head[0]!;
    const length = peekU32(head, 1);
    if (length === 'incomplete') {
      throw new ManifestError('truncated', `section header at byte ${start} runs past the end of the image (${size} bytes)`, { offset: start });
    }
    if (length === 'overlong') {
      throw new ManifestError('bad-module', `section at byte ${start} has a size that is not a LEB128 u32`, { offset: start });
    }
    const body = start + length.next;
    const end = body + length.value;
    if (end > size) {
      throw new ManifestError(
        'truncated',
        `the ${SECTION_NAMES[id] ?? `id ${id}`} section at byte ${start} claims ${length.value} bytes, past the end of the image (${size} bytes)`,
        { offset: start },
      );
    }
    if (id === 0) {
      const payload = yield* customPayload(start, body, end);
      if (payload) found.push(payload);
    }
    pos = end;
  }
  return found;
}

/** The payload of the custom section framed by [body, end) when its name is `.berm.abi`. */
function* customPayload(start: number, body: number, end: number): Reader<Uint8Array | undefined> {
  const head = yield* read(body, Math.min(5, end - body));
  const nameLength = peekU32(head, 0);
  if (typeof nameLength === 'string') {
    throw new ManifestError('bad-module', `custom section at byte ${start} has no readable name length`, { offset: body });
  }
  const nameStart = body + nameLength.next;
  const payloadStart = nameStart + nameLength.value;
  if (payloadStart > end) {
    throw new ManifestError('bad-module', `the name of the custom section at byte ${start} runs past the end of the section`, { offset: nameStart });
  }
  // Names of another length cannot match, so most custom sections cost no read of their name.
  if (nameLength.value !== NAME.length) return undefined;
  const name = yield* read(nameStart, NAME.length);
  if (!NAME.every((b, i) => name[i] === b)) return undefined;
  return yield* read(payloadStart, end - payloadStart);
}
