import { read, type Reader } from './source.js';
import { customSectionName, MAX_SECTION_HEADER, sectionFrame, type SectionFrame } from './wasm-sections.js';
import { SECTION_NAME } from './writer.js';

/*
 * Why a hand-written walk and not @webassemblyjs/wasm-parser: measured, its decode fails on current
 * code (`Unexpected instruction: 0xfc06`, i64.trunc_sat_f64_s, a saturating float-to-int),
 * takes thousands of times longer on large binaries even with the code and data sections ignored
 * (bench/manifest.js compares the two on a 20 MB image), and drops the names of custom
 * sections, which are exactly what this reader looks for. Reading the manifest only needs the
 * section frames: an id, a LEB128 size, and for custom sections a name. Bodies are skipped, so the
 * cost follows the number of sections, not their size. The decoder stays a dev dependency, for that
 * benchmark only. The frames are decoded by `wasm-sections.ts`, as in every other walk of a module in
 * berm; what is left here is the choice of what to fetch.
 */

const NAME = new TextEncoder().encode(SECTION_NAME);

/**
 * Walks the sections of a core module of `size` bytes whose 8-byte header has been checked, and
 * returns the bodies of every `.berm.abi` custom section in file order.
 */
export function* wasmSections(size: number): Reader<Uint8Array[]> {
  const found: Uint8Array[] = [];
  let pos = 8;
  while (pos < size) {
    const head = yield* read(pos, Math.min(MAX_SECTION_HEADER, size - pos));
    const frame = sectionFrame(head, pos, size, pos);
    if (frame.id === 0) {
      const payload = yield* customPayload(frame);
      if (payload) found.push(payload);
    }
    pos = frame.bodyEnd;
  }
  return found;
}

/** The payload of the custom section `frame` when its name is `.berm.abi`. */
function* customPayload(frame: SectionFrame): Reader<Uint8Array | undefined> {
  const { bodyStart, bodyEnd } = frame;
  const head = yield* read(bodyStart, Math.min(5, bodyEnd - bodyStart));
  const { nameStart, nameEnd } = customSectionName(head, frame, bodyStart);
  // Names of another length cannot match, so most custom sections cost no read of their name.
  if (nameEnd - nameStart !== NAME.length) return undefined;
  const name = yield* read(nameStart, NAME.length);
  if (!NAME.every((b, i) => name[i] === b)) return undefined;
  return yield* read(nameEnd, bodyEnd - nameEnd);
}
