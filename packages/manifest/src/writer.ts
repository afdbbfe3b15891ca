import { ManifestError } from './errors.js';
import { encodeU32 } from './leb128.js';
import type { EventSpec, ManifestData } from './types.js';
import { customSectionName, moduleSections, type SectionFrame } from './wasm-sections.js';

export const SECTION_NAME = '.berm.abi';

const WASM_HEADER = Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00);
const encoder = new TextEncoder();
const NAME = encoder.encode(SECTION_NAME);

/** Splits a merged manifest into the records a linker would have joined: the program's, then one per event. */
export function manifestRecords(manifest: ManifestData): string[] {
  const { events, ...program } = manifest;
  return [JSON.stringify(program), ...events.map((event: EventSpec) => JSON.stringify({ event }))];
}

/** Encodes one custom section (id 0) holding `payload` under `name`. */
export function customSection(name: string, payload: Uint8Array): Uint8Array {
  const nameBytes = encoder.encode(name);
  const nameLen = encodeU32(nameBytes.length);
  const bodyLen = nameLen.length + nameBytes.length + payload.length;
  const size = encodeU32(bodyLen);
  const out = new Uint8Array(1 + size.length + bodyLen);
  let p = 0;
  out[p++] = 0;
  out.set(size, p);
  p += size.length;
  out.set(nameLen, p);
  p += nameLen.length;
  out.set(nameBytes, p);
  p += nameBytes.length;
  out.set(payload, p);
  return out;
}

export interface WriteOptions {
  /** Bytes placed between records; linkers pad with NULs, hand-written streams often with newlines. */
  separator?: string;
}

/**
 * Returns a copy of the wasm module `module` whose `.berm.abi` content is `records`:
 * every existing `.berm.abi` section is dropped and one new section is appended.
 * `records` is a merged manifest, or the raw record texts in link order.
 */
export function writeManifestSection(
  module: Uint8Array,
  records: ManifestData | readonly string[],
  options: WriteOptions = {},
): Uint8Array {
  if (module.length < 8 || !WASM_HEADER.every((b, i) => module[i] === b)) {
    throw new ManifestError('not-an-image', 'the writer takes a WebAssembly core module (magic \\0asm, version 1)', { offset: 0 });
  }
  const texts = Array.isArray(records) ? (records as readonly string[]) : manifestRecords(records as ManifestData);
  const payload = encoder.encode(texts.join(options.separator ?? '\n'));
  const kept: Uint8Array[] = [module.subarray(0, 8)];
  for (const section of moduleSections(module)) {
    if (section.id === 0 && isManifestSection(module, section)) continue;
    kept.push(module.subarray(section.start, section.bodyEnd));
  }
  kept.push(customSection(SECTION_NAME, payload));
  const total = kept.reduce((n, part) => n + part.length, 0);
  const out = new Uint8Array(total);
  let p = 0;
  for (const part of kept) {
    out.set(part, p);
    p += part.length;
  }
  return out;
}

/** Whether the custom section `section` is named `.berm.abi`, compared as bytes as the reader does. */
function isManifestSection(module: Uint8Array, section: SectionFrame): boolean {
  const { nameStart, nameEnd } = customSectionName(module, section);
  return nameEnd - nameStart === NAME.length && NAME.every((b, i) => module[nameStart + i] === b);
}
