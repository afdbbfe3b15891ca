// A minimal ELF writer for fixtures: a header, the section contents, a section name string table
// and the section header table at the end (the layout GNU ld produces), in either class and byte order.

export interface ElfSection {
  name: string;
  data: Uint8Array;
  /** sh_type; PROGBITS (1) unless given. */
  type?: number;
}

export interface ElfOptions {
  bits: 32 | 64;
  endian: 'little' | 'big';
  sections: ElfSection[];
}

/** Offsets of the header fields a test may want to corrupt. */
export interface ElfLayout {
  shoff: number;
  shentsize: number;
  shnum: number;
  shstrndx: number;
  /** File offset of the section header table and the size of one entry. */
  tableOffset: number;
  entrySize: number;
}

const SHT_PROGBITS = 1;
const SHT_STRTAB = 3;

export function elfLayout(bits: 32 | 64): Omit<ElfLayout, 'tableOffset'> {
  return bits === 64
    ? { shoff: 0x28, shentsize: 0x3a, shnum: 0x3c, shstrndx: 0x3e, entrySize: 64 }
    : { shoff: 0x20, shentsize: 0x2e, shnum: 0x30, shstrndx: 0x32, entrySize: 40 };
}

/** Builds an ELF relocatable file holding `sections` (after the null section) and `.shstrtab`. */
export function buildElf({ bits, endian, sections }: ElfOptions): { bytes: Uint8Array; layout: ElfLayout } {
  const little = endian === 'little';
  const wide = bits === 64;
  const headerSize = wide ? 64 : 52;
  const fields = elfLayout(bits);
  const encoder = new TextEncoder();

  const all: ElfSection[] = [...sections];
  const names: number[] = [0];
  const nameOffsets: number[] = [];
  for (const section of [...all, { name: '.shstrtab', data: new Uint8Array() }]) {
    nameOffsets.push(names.length);
    names.push(...encoder.encode(section.name), 0);
  }
  all.push({ name: '.shstrtab', data: Uint8Array.from(names), type: SHT_STRTAB });

  const offsets: number[] = [];
  let at = headerSize;
  for (const section of all) {
    offsets.push(at);
    at += section.data.length;
  }
  const tableOffset = (at + 7) & ~7;
  const count = all.length + 1;
  const total = tableOffset + count * fields.entrySize;

  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  const word = (offset: number, value: number) =>
    wide ? view.setBigUint64(offset, BigInt(value), little) : view.setUint32(offset, value, little);

  bytes.set([0x7f, 0x45, 0x4c, 0x46, wide ? 2 : 1, little ? 1 : 2, 1], 0);
  view.setUint16(16, 1, little); // ET_REL
  view.setUint16(18, wide ? 62 : 3, little); // x86-64 / i386; nothing here depends on it
  view.setUint32(20, 1, little); // EV_CURRENT
  word(fields.shoff, tableOffset);
  view.setUint16(wide ? 0x34 : 0x28, headerSize, little); // e_ehsize
  view.setUint16(fields.shentsize, fields.entrySize, little);
  view.setUint16(fields.shnum, count, little);
  view.setUint16(fields.shstrndx, count - 1, little);

  all.forEach((section, i) => {
    bytes.set(section.data, offsets[i]);
    const entry = tableOffset + (i + 1) * fields.entrySize;
    view.setUint32(entry, nameOffsets[i]!, little);
    view.setUint32(entry + 4, section.type ?? SHT_PROGBITS, little);
    if (wide) {
      view.setBigUint64(entry + 0x18, BigInt(offsets[i]!), little);
      view.setBigUint64(entry + 0x20, BigInt(section.data.length), little);
      view.setBigUint64(entry + 0x30, 1n, little); // sh_addralign
    } else {
      view.setUint32(entry + 0x10, offsets[i]!, little);
      view.setUint32(entry + 0x14, section.data.length, little);
      view.setUint32(entry + 0x20, 1, little);
    }
  });

  return { bytes, layout: { ...fields, tableOffset } };
}
