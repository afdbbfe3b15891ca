import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Manifest, manifestRecords, type Break, type ManifestData } from '@berm/manifest';
import { buildElf } from '../../../test/helpers/elf.js';
import { buildImage, sampleManifest } from '../../../test/helpers/wat.js';
import { ANSI, MINIMAL_WAT, Scratch, runCli } from './helpers/cli.js';

const oldManifest: ManifestData = sampleManifest({
  tools: [
    ...sampleManifest().tools,
    {
      name: 'size',
      description: 'Counts bytes.',
      arguments: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
  ],
  events: [{ name: 'ping', description: 'A ping.', fields: { type: 'object', properties: { at: { type: 'string' } }, required: ['at'] } }],
});

/** echo takes a newly required argument, size is gone, and so is the event. */
const newManifest: ManifestData = sampleManifest({
  tools: [
    {
      ...sampleManifest().tools[0]!,
      arguments: { type: 'object', properties: { query: { type: 'string' }, lang: { type: 'string' } }, required: ['query', 'lang'] },
    },
  ],
});

let scratch: Scratch;
const files: Record<string, string> = {};
let expected: Break[];

beforeAll(async () => {
  scratch = await Scratch.create();
  files.oldImage = await scratch.write('old.wasm', await buildImage(MINIMAL_WAT, oldManifest));
  files.newImage = await scratch.write('new.wasm', await buildImage(MINIMAL_WAT, newManifest));
  files.oldJson = await scratch.write('old.json', JSON.stringify(oldManifest, null, 2));
  files.newJson = await scratch.write('new.json', JSON.stringify(newManifest));
  files.newElf = await scratch.write(
    'new.elf',
    buildElf({
      bits: 32,
      endian: 'big',
      sections: [{ name: '.berm.abi', data: new TextEncoder().encode(manifestRecords(newManifest).join('\0\0')) }],
    }).bytes,
  );
  files.text = await scratch.write('notes.txt', 'these are not the bytes you are looking for\n');
  // Short enough that the JSON parser quotes all of it, line break included.
  files.shortText = await scratch.write('short.txt', 'garbage\r\nmore\n');
  files.binary = await scratch.write('noise.bin', Uint8Array.of(0xff, 0xfe, 0x00, 0x01, 0x80));
  files.invalidJson = await scratch.write('invalid.json', JSON.stringify({ ...oldManifest, tools: 'none' }));
  const image = await buildImage(MINIMAL_WAT, oldManifest);
  files.truncated = await scratch.write('truncated.wasm', image.subarray(0, image.length - 3));
  files.missing = join(scratch.dir, 'missing.wasm');
  expected = Manifest.fromJSON(oldManifest).breaks(Manifest.fromJSON(newManifest));
});

afterAll(async () => {
  await scratch.remove();
});

describe('crab breaks OLD NEW', () => {
  it('exits 0 and says so when nothing breaks', async () => {
    const r = await runCli(['breaks', files.oldImage!, files.oldJson!]);
    expect(r).toEqual({ code: 0, stdout: 'No breaking changes.\n', stderr: '' });
    const json = await runCli(['breaks', '--json', files.oldJson!, files.oldImage!]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  it('exits 1 and lists the breaks grouped by tool and event, with a summary line', async () => {
    expect(expected.map((b) => b.code).sort()).toEqual(['argument-newly-required', 'event-removed', 'tool-removed']);
    const r = await runCli(['breaks', files.oldImage!, files.newImage!]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => /^(tool|event) /.test(l))).toEqual(['tool echo', 'tool size', 'event ping']);
    for (const b of expected) expect(lines.some((l) => l.startsWith(`  ${b.code} `) && l.includes(b.message))).toBe(true);
    expect(lines.at(-1)).toBe('3 breaking changes in 2 tools and 1 event');
  });

  it('answers the same for image, ELF and JSON inputs in any mix', async () => {
    const pairs = [
      [files.oldImage!, files.newImage!],
      [files.oldJson!, files.newImage!],
      [files.oldImage!, files.newJson!],
      [files.oldJson!, files.newElf!],
    ];
    for (const [old, next] of pairs) {
      const r = await runCli(['breaks', '--format', 'json', old!, next!]);
      expect(r.code, `${old} ${next}`).toBe(1);
      expect(JSON.parse(r.stdout)).toEqual(expected);
    }
  });

  it('--json prints the break array, whatever --format says, and still exits 1', async () => {
    for (const extra of [[], ['--format', 'markdown']]) {
      const r = await runCli(['breaks', '--json', ...extra, files.oldImage!, files.newImage!]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toEqual(expected);
    }
  });

  it('--format github prints one escaped ::error annotation per break and exits 1', async () => {
    const r = await runCli(['breaks', '--format', 'github', files.oldImage!, files.newImage!]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(expected.length);
    for (const [i, b] of expected.entries()) {
      expect(lines[i]).toMatch(new RegExp(`^::error title=${b.code} in (tool|event) [a-z]+::`));
      expect(lines[i]).not.toMatch(/\r/);
    }
  });

  it('--format markdown prints a summary and a table row per break and exits 1', async () => {
    const r = await runCli(['breaks', '--format', 'markdown', files.oldImage!, files.newImage!]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('**3 breaking changes**');
    const rows = lines.filter((l) => l.startsWith('| ') && !l.startsWith('| Concerns') && !l.startsWith('| ---'));
    expect(rows).toHaveLength(expected.length);
    for (const b of expected) expect(rows.some((row) => row.includes(`\`${b.code}\``))).toBe(true);
  });

  it('exits 0 in every format when nothing breaks', async () => {
    for (const format of ['text', 'json', 'github', 'markdown']) {
      const r = await runCli(['breaks', '--format', format, files.newImage!, files.newJson!]);
      expect(r.code, format).toBe(0);
    }
  });

  it('answers to berm with the same exit codes', async () => {
    expect((await runCli(['breaks', files.oldImage!, files.newImage!], { bin: 'berm' })).code).toBe(1);
    expect((await runCli(['breaks', files.oldImage!, files.oldImage!], { bin: 'berm' })).code).toBe(0);
  });
});

describe('crab breaks colour', () => {
  it('colours the text format only when allowed', async () => {
    const args = ['breaks', files.oldImage!, files.newImage!];
    expect((await runCli(args)).stdout).not.toMatch(ANSI);
    expect((await runCli(args, { env: { FORCE_COLOR: '1' } })).stdout).toMatch(ANSI);
    expect((await runCli(args, { env: { FORCE_COLOR: '1', NO_COLOR: '1' } })).stdout).not.toMatch(ANSI);
  });

  it('never colours json, github or markdown output', async () => {
    for (const format of ['json', 'github', 'markdown']) {
      const r = await runCli(['breaks', '--format', format, files.oldImage!, files.newImage!], { env: { FORCE_COLOR: '1' } });
      expect(r.stdout, format).not.toMatch(ANSI);
    }
  });
});

describe('text the inputs control', () => {
  it('reaches the terminal with its control characters shown as pictures, in breaks and in errors', async () => {
    const esc = '\u001b';
    // A closed object: the property's removal is a break, whose message and path name it.
    const named = (key: string) =>
      sampleManifest({
        tools: [
          {
            ...sampleManifest().tools[0]!,
            arguments: { type: 'object', properties: { [key]: { type: 'string' } }, additionalProperties: false },
          },
        ],
      });
    const key = `q${esc}[2J`;
    const before = await scratch.write('control-old.json', JSON.stringify(named(key)));
    const after = await scratch.write('control-new.json', JSON.stringify(named('q')));
    const r = await runCli(['breaks', before, after], { env: { FORCE_COLOR: '1' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('q\u241b[2J');
    expect(r.stdout).not.toContain(`${esc}[2J`);
    // The reader quotes what it could not parse; the one line on stderr does not pass it on raw.
    const noise = await scratch.write('control.txt', `${esc}[2J${esc}]0;x\u0007`);
    const bad = await runCli(['breaks', noise, after]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });
});

describe('crab breaks on bad input', () => {
  const cases: { name: string; args: () => string[]; code: string; file: () => string; line: (f: string) => string }[] = [
    {
      name: 'a missing NEW',
      args: () => [files.oldImage!, files.missing!],
      code: 'file-not-found',
      file: () => files.missing!,
      line: (f) => `crab: cannot read '${f}': no such file`,
    },
    {
      name: 'a directory as OLD',
      args: () => [scratch.dir, files.newImage!],
      code: 'is-a-directory',
      file: () => scratch.dir,
      line: (f) => `crab: cannot read '${f}': it is a directory`,
    },
    {
      name: 'a text file that is not JSON',
      args: () => [files.text!, files.newImage!],
      code: 'not-image-or-manifest',
      file: () => files.text!,
      line: (f) => `crab: '${f}' is neither a berm image nor manifest JSON: `,
    },
    {
      name: 'a short text file with line breaks',
      args: () => [files.shortText!, files.newImage!],
      code: 'not-image-or-manifest',
      file: () => files.shortText!,
      line: (f) => `crab: '${f}' is neither a berm image nor manifest JSON: `,
    },
    {
      name: 'bytes that are not text',
      args: () => [files.oldImage!, files.binary!],
      code: 'not-image-or-manifest',
      file: () => files.binary!,
      line: (f) => `crab: '${f}' is neither a berm image nor manifest JSON: it is not UTF-8 text`,
    },
    {
      name: 'JSON that is not a valid manifest',
      args: () => [files.oldImage!, files.invalidJson!],
      code: 'invalid-manifest',
      file: () => files.invalidJson!,
      line: (f) => `crab: '${f}' has an invalid manifest at /tools`,
    },
    {
      name: 'a truncated image',
      args: () => [files.truncated!, files.newImage!],
      code: 'truncated',
      file: () => files.truncated!,
      line: (f) => `crab: '${f}' is not a berm image: `,
    },
  ];

  for (const c of cases) {
    it(`exits 2 on ${c.name}, naming the file in one line`, async () => {
      const r = await runCli(['breaks', ...c.args()]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.startsWith(c.line(c.file()))).toBe(true);
      expect(r.stderr.split('\n')).toHaveLength(2);
    });

    it(`reports ${c.name} as a JSON error with --json`, async () => {
      const r = await runCli(['breaks', '--json', ...c.args()]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toEqual({ error: expect.objectContaining({ code: c.code, file: c.file() }) });
    });
  }

  it('names OLD when both are bad', async () => {
    const r = await runCli(['breaks', files.text!, files.missing!]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`'${files.text}'`);
    expect(r.stderr).not.toContain('missing.wasm');
  });

  it('exits 2 on an unknown format or a missing argument', async () => {
    const format = await runCli(['breaks', '--format', 'xml', files.oldImage!, files.newImage!]);
    expect(format.code).toBe(2);
    expect(format.stderr).toMatch(/^crab: .*xml.*; see 'crab breaks --help'\n$/);
    const missing = await runCli(['breaks', files.oldImage!]);
    expect(missing).toEqual({ code: 2, stdout: '', stderr: "crab: missing argument NEW; see 'crab breaks --help'\n" });
  });
});
