import { ManifestError } from './errors.js';
import { read, type Reader } from './source.js';
import { SECTION_NAME } from './writer.js';

/** `.berm.abi` with the NUL that ends it in the section name string table. */
const NAME = new TextEncoder().encode(`${SECTION_NAME}\0`);

const ELFCLASS32 = 1;
const ELFCLASS64 = 2;
const ELFDATA2LSB = 1;
const ELFDATA2MSB = 2;
const SHT_NOBITS = 8;
/** e_shstrndx value meaning "the real index is in sh_link of section 0". */
const SHN_XINDEX = 0xffff;

interface Layout {
  headerSize: number;
  entrySize: number;
  shoff: number;
  shentsize: number;
  shnum: number;
  shstrndx: number;
  /** Field offsets inside a section header. */
  name: number;
  type: number;
  offset: number;
  size: number;
  link: number;
}

const LAYOUT32 = {
  headerSize: 52,
  entrySize: 40,
  shoff: 0x20,
  shentsize: 0x2e,
  shnum: 0x30,
  shstrndx: 0x32,
  name: 0,
  type: 4,
  offset: 0x10,
  size: 0x14,
  link: 0x18,
};
const LAYOUT64 = {
  headerSize: 64,
  entrySize: 64,
  shoff: 0x28,
  shentsize: 0x3a,
  shnum: 0x3c,
  shstrndx: 0x3e,
  name: 0,
  type: 4,
  offset: 0x18,
  size: 0x20,
  link: 0x28,
};

interface SectionHeader {
  name: number;
  type: number;
  offset: number;
  size: number;
  link: number;
}

/**
 * Finds every section named `.berm.abi` in an ELF file of `size` bytes (32 or 64 bit, either byte
 * order) through the section header table and the section name string table, and returns their
 * contents in header-table order. A `truncated` error's offset is where the overrunning part starts,
 * or the end of the file when it claims to start past it. `ident` holds the file's first bytes (at least the 16 of e_ident
 * when the file has them). Every offset and size read from the file is bounded by `size` before use.
 */
export function* elfSections(size: number, ident: Uint8Array): Reader<Uint8Array[]> {
  if (ident.length < 16) {
    throw new ManifestError('truncated', `the ELF identification runs past the end of the file (${size} bytes)`, { offset: 0 });
  }
  const elfClass = ident[4];
  const data = ident[5];
  if (elfClass !== ELFCLASS32 && elfClass !== ELFCLASS64) {
    throw new ManifestError('bad-module', `ELF class ${elfClass} at byte 4 is neither 32 (1) nor 64 bit (2)`, { offset: 4 });
  }
  if (data !== ELFDATA2LSB && data !== ELFDATA2MSB) {
    throw new ManifestError('bad-module', `ELF data encoding ${data} at byte 5 is neither little (1) nor big endian (2)`, { offset: 5 });
  }
  const wide = elfClass === ELFCLASS64;
  const little = data === ELFDATA2LSB;
  const layout: Layout = wide ? LAYOUT64 : LAYOUT32;
  if (size < layout.headerSize) {
    throw new ManifestError(
      'truncated',
      `the ${wide ? 64 : 32}-bit ELF header (${layout.headerSize} bytes) runs past the end of the file (${size} bytes)`,
      {
        offset: 0,
      },
    );
  }
  const header = new DataView(...viewArgs(yield* read(0, layout.headerSize)));
  const word = (view: DataView, at: number): number => (wide ? Number(view.getBigUint64(at, little)) : view.getUint32(at, little));

  const shoff = word(header, layout.shoff);
  const shentsize = header.getUint16(layout.shentsize, little);
  let shnum = header.getUint16(layout.shnum, little);
  let shstrndx = header.getUint16(layout.shstrndx, little);
  if (shoff === 0) {
    throw new ManifestError('no-manifest', 'the ELF file has no section header table, so no .berm.abi section', { offset: layout.shoff });
  }
  if (shentsize < layout.entrySize) {
    throw new ManifestError(
      'bad-module',
      `ELF section headers of ${shentsize} bytes are shorter than the ${layout.entrySize} a header needs`,
      {
        offset: layout.shentsize,
      },
    );
  }

  const entryAt = function* (index: number): Reader<SectionHeader> {
    const at = shoff + index * shentsize;
    if (at + layout.entrySize > size) {
      throw new ManifestError('truncated', `ELF section header ${index} at byte ${at} runs past the end of the file (${size} bytes)`, {
        offset: Math.min(at, size),
      });
    }
    const view = new DataView(...viewArgs(yield* read(at, layout.entrySize)));
    return {
      name: view.getUint32(layout.name, little),
      type: view.getUint32(layout.type, little),
      offset: word(view, layout.offset),
      size: word(view, layout.size),
      link: view.getUint32(layout.link, little),
    };
  };

  // Extended numbering: with 0xff00 sections or more, the real counts live in section 0.
  if (shnum === 0 || shstrndx === SHN_XINDEX) {
    const first = yield* entryAt(0);
    if (shnum === 0) shnum = first.size;
    if (shstrndx === SHN_XINDEX) shstrndx = first.link;
  }
  if (shnum === 0) {
    throw new ManifestError('no-manifest', 'the ELF file has no sections, so no .berm.abi section', { offset: layout.shnum });
  }
  const tableEnd = shoff + shnum * shentsize;
  if (tableEnd > size) {
    throw new ManifestError(
      'truncated',
      `the ELF section header table at byte ${shoff} (${shnum} headers of ${shentsize} bytes) runs past the end of the file (${size} bytes)`,
      { offset: Math.min(shoff, size) },
    );
  }
  if (shstrndx === 0) {
    throw new ManifestError('no-manifest', 'the ELF file has no section name string table, so no .berm.abi section', {
      offset: layout.shstrndx,
    });
  }
  if (shstrndx >= shnum) {
    throw new ManifestError('bad-module', `the ELF section name table index ${shstrndx} is not below the section count ${shnum}`, {
      offset: layout.shstrndx,
    });
  }

  // The table and the name strings are read whole: both are small next to the sections they describe.
  const table = yield* read(shoff, tableEnd - shoff);
  const strtabHeader = yield* entryAt(shstrndx);
  const names = yield* contents(strtabHeader, shstrndx, 'section name string table');
  const tableView = new DataView(...viewArgs(table));

  const found: Uint8Array[] = [];
  for (let index = 0; index < shnum; index++) {
    const at = index * shentsize;
    const name = tableView.getUint32(at + layout.name, little);
    // A name offset outside the string table names nothing this reader looks for.
    if (name + NAME.length > names.length || !NAME.every((b, i) => names[name + i] === b)) continue;
    found.push(
      yield* contents(
        {
          name,
          type: tableView.getUint32(at + layout.type, little),
          offset: word(tableView, at + layout.offset),
          size: word(tableView, at + layout.size),
          link: 0,
        },
        index,
        SECTION_NAME,
      ),
    );
  }
  if (found.length === 0) {
    throw new ManifestError('no-manifest', `the ELF file has no ${SECTION_NAME} section`);
  }
  return found;

  function* contents(section: SectionHeader, index: number, what: string): Reader<Uint8Array> {
    // A NOBITS section occupies no bytes of the file.
    if (section.type === SHT_NOBITS) return new Uint8Array(0);
    if (section.offset + section.size > size) {
      throw new ManifestError(
        'truncated',
        `ELF section ${index} (${what}) at byte ${section.offset} claims ${section.size} bytes, past the end of the file (${size} bytes)`,
        { offset: Math.min(section.offset, size) },
      );
    }
    return yield* read(section.offset, section.size);
  }
}

function viewArgs(bytes: Uint8Array): [ArrayBufferLike, number, number] {
  return [bytes.buffer, bytes.byteOffset, bytes.byteLength];
}
