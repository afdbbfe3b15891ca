import { describe, expect, it } from 'vitest';
import { Manifest, manifestRecords } from '@berm/manifest';
import { buildElf } from '../../../test/helpers/elf.js';
import { sampleManifest } from '../../../test/helpers/wat.js';
import { encoder, expectCode, manifestError } from './support.js';

const manifest = sampleManifest({
  usage: 'From an ELF file.',
  events: [{ name: 'seen', description: 'Something was seen.', fields: { type: 'object' } }],
});
const stream = encoder.encode(manifestRecords(manifest).join('\0\0\0\0'));

const variants = [
  { bits: 32, endian: 'little' },
  { bits: 32, endian: 'big' },
  { bits: 64, endian: 'little' },
  { bits: 64, endian: 'big' },
] as const;

function text(s: string) {
  return encoder.encode(s);
}

describe.each(variants)('ELF $bits-bit $endian endian', ({ bits, endian }) => {
  const little = endian === 'little';
  const sections = [
    { name: '.text', data: Uint8Array.of(0x90, 0x90, 0xc3) },
    { name: '.berm.abi', data: stream },
    { name: '.comment', data: text('GCC: (GNU) 14\0') },
  ];

  it('reads the .berm.abi section found by name', () => {
    const { bytes } = buildElf({ bits, endian, sections });
    expect(Manifest.fromImage(bytes).data).toEqual(manifest);
  });

  it('joins several .berm.abi sections in header-table order', () => {
    const { bytes } = buildElf({
      bits,
      endian,
      sections: [
        { name: '.berm.abi', data: text('{"abi_version":1}\n') },
        { name: '.berm.abix', data: text('not json') },
        { name: '.berm.abi', data: text('{"event":{"name":"later","fields":true}}') },
      ],
    });
    expect(Manifest.fromImage(bytes).events.map((e) => e.name)).toEqual(['later']);
  });

  it('no-manifest: no .berm.abi section, or no section header table', () => {
    const { bytes, layout } = buildElf({ bits, endian, sections: [sections[0]!, sections[2]!] });
    expectCode(
      manifestError(() => Manifest.fromImage(bytes)),
      'no-manifest',
    );
    const withTable = buildElf({ bits, endian, sections }).bytes;
    const view = new DataView(withTable.buffer);
    if (bits === 64) view.setBigUint64(layout.shoff, 0n, little);
    else view.setUint32(layout.shoff, 0, little);
    expectCode(
      manifestError(() => Manifest.fromImage(withTable)),
      'no-manifest',
    );
  });

  it('reads extended section numbering (counts kept in section 0)', () => {
    const { bytes, layout } = buildElf({ bits, endian, sections });
    const view = new DataView(bytes.buffer);
    const count = view.getUint16(layout.shnum, little);
    const strndx = view.getUint16(layout.shstrndx, little);
    view.setUint16(layout.shnum, 0, little);
    view.setUint16(layout.shstrndx, 0xffff, little);
    const first = layout.tableOffset;
    if (bits === 64) view.setBigUint64(first + 0x20, BigInt(count), little);
    else view.setUint32(first + 0x14, count, little);
    view.setUint32(first + (bits === 64 ? 0x28 : 0x18), strndx, little);
    expect(Manifest.fromImage(bytes).data).toEqual(manifest);
  });

  it('truncated: the section, the header table or the header past the end of the file', () => {
    const { bytes, layout } = buildElf({ bits, endian, sections });
    const view = new DataView(bytes.buffer);
    // The .berm.abi header is entry 2 (after the null section and .text).
    const entry = layout.tableOffset + 2 * layout.entrySize;
    const offsetField = entry + (bits === 64 ? 0x18 : 0x10);
    const sectionOffset = bits === 64 ? Number(view.getBigUint64(offsetField, little)) : view.getUint32(offsetField, little);

    const grown = bytes.slice();
    const grownView = new DataView(grown.buffer);
    if (bits === 64) grownView.setBigUint64(entry + 0x20, 0xffff_ffff_ffffn, little);
    else grownView.setUint32(entry + 0x14, 0xffff_ff00, little);
    const error = manifestError(() => Manifest.fromImage(grown));
    expectCode(error, 'truncated');
    expect(error.offset).toBe(sectionOffset);
    expect(error.message).toContain(`byte ${sectionOffset}`);

    const cut = manifestError(() => Manifest.fromImage(bytes.subarray(0, layout.tableOffset + layout.entrySize)));
    expectCode(cut, 'truncated');
    expect(cut.offset).toBe(layout.tableOffset);

    expectCode(
      manifestError(() => Manifest.fromImage(bytes.subarray(0, 20))),
      'truncated',
    );
    expectCode(
      manifestError(() => Manifest.fromImage(bytes.subarray(0, 10))),
      'truncated',
    );
  });

  it('bad-module: impossible header values', () => {
    const { bytes, layout } = buildElf({ bits, endian, sections });
    const corrupt = (edit: (view: DataView, copy: Uint8Array) => void) => {
      const copy = bytes.slice();
      edit(new DataView(copy.buffer), copy);
      return manifestError(() => Manifest.fromImage(copy));
    };
    expectCode(
      corrupt((_, c) => (c[4] = 3)),
      'bad-module',
    );
    expectCode(
      corrupt((_, c) => (c[5] = 0)),
      'bad-module',
    );
    expectCode(
      corrupt((v) => v.setUint16(layout.shentsize, 8, little)),
      'bad-module',
    );
    const strndx = corrupt((v) => v.setUint16(layout.shstrndx, 200, little));
    expectCode(strndx, 'bad-module');
    expect(strndx.message).toContain('200');
  });
});
