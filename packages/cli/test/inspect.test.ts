import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestRecords, type ManifestData } from '@berm/manifest';
import { buildElf } from '../../../test/helpers/elf.js';
import { buildImage, sampleManifest, wat2wasm } from '../../../test/helpers/wat.js';
import { standIn } from '../../../test/helpers/loopback.js';
import { ANSI, FORECAST_TOOL, MINIMAL_WAT, Scratch, repoRoot, runCli } from './helpers/cli.js';

const manifest: ManifestData = sampleManifest({
  version: '2.4.0',
  tools: [FORECAST_TOOL],
  events: [
    {
      name: 'alert',
      description: 'Severe weather.',
      fields: { type: 'object', properties: { level: { enum: ['low', 'high'] } }, required: ['level'] },
    },
  ],
  deps: { programs: ['geo'], syscalls: { 'berm.http.fetch': ['api.example.com'] }, secrets: ['example'] },
});

let scratch: Scratch;
const files: Record<string, string> = {};

beforeAll(async () => {
  scratch = await Scratch.create();
  const image = await buildImage(MINIMAL_WAT, manifest);
  files.image = await scratch.write('weather.wasm', image);
  files.elf = await scratch.write(
    'weather.elf',
    buildElf({
      bits: 64,
      endian: 'little',
      sections: [{ name: '.berm.abi', data: new TextEncoder().encode(manifestRecords(manifest).join('\n')) }],
    }).bytes,
  );
  files.future = await scratch.write('future.wasm', await buildImage(MINIMAL_WAT, sampleManifest({ abi_version: 2 })));
  files.text = await scratch.write('notes.txt', 'just some notes\n');
  files.component = await scratch.write('component.wasm', Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00));
  files.truncated = await scratch.write('truncated.wasm', image.subarray(0, image.length - 10));
  files.bare = await scratch.write('bare.wasm', await wat2wasm(MINIMAL_WAT));
  files.badRecord = await scratch.write('bad-record.wasm', await buildImage(MINIMAL_WAT, ['{"abi_version": 1,']));
  const invalid = { ...sampleManifest(), tools: [{ name: 'not a name', description: '', arguments: { type: 'object' } }] };
  files.invalid = await scratch.write('invalid.wasm', await buildImage(MINIMAL_WAT, [JSON.stringify(invalid)]));
  // Far more output than a pipe buffers, so a reader that stops early makes the writer meet EPIPE.
  const many = sampleManifest({ tools: Array.from({ length: 2000 }, (_, i) => ({ ...manifest.tools[0]!, name: `tool_${i}` })) });
  files.large = await scratch.write('large.wasm', await buildImage(MINIMAL_WAT, many));
  files.missing = join(scratch.dir, 'missing.wasm');
  files.directory = scratch.dir;
});

afterAll(async () => {
  await scratch.remove();
});

describe('crab inspect IMAGE', () => {
  it('prints the name line with the version, each tool on a line, events and deps', async () => {
    const r = await runCli(['inspect', files.image!]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('weather.wasm 2.4.0');
    expect(lines).toContain('  forecast(city: string, days?: integer ≥0) -> Forecast{high: number, low: number}  query');
    expect(lines).toContain('      Forecasts the weather.');
    expect(lines).toContain('  alert{level: "low"|"high"}');
    expect(lines).toContain('  programs  geo');
    expect(lines).toContain('  syscalls  berm.http.fetch -> api.example.com');
    expect(lines).toContain('  secrets   example');
    expect(r.stdout).not.toContain('not deployed');
  });

  it('reads an ELF image too', async () => {
    const r = await runCli(['inspect', files.elf!]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('weather.elf 2.4.0');
  });

  it('warns when abi_version is not 1, and still shows the manifest', async () => {
    const r = await runCli(['inspect', files.future!]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[1]).toBe('warning: abi_version is 2, not 1: deploy will refuse this image');
    expect(r.stdout).toContain('echo(query: string)');
  });

  it('does not ask the daemon when the image declares no programs, so a daemon that is down does not matter', async () => {
    let asked = 0;
    const { server, url } = await standIn((_req, res) => {
      asked++;
      res.writeHead(500).end();
    });
    try {
      // As with BERM_URL exported in a shell whose daemon is not running.
      const r = await runCli(['inspect', files.future!], { env: { BERM_URL: url } });
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toContain('echo(query: string)');
      expect(asked).toBe(0);
      // The image that declares one does ask, and says what failed.
      const declared = await runCli(['inspect', files.image!, '--url', url]);
      expect(declared.code).not.toBe(0);
      expect(asked).toBeGreaterThan(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers to berm as well, and help names the program as typed', async () => {
    const r = await runCli(['inspect', files.image!], { bin: 'berm' });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('weather.wasm 2.4.0');
    const help = await runCli(['inspect', '--help'], { bin: 'berm' });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('$ berm inspect IMAGE');
    expect(help.stdout).not.toContain('crab');
    expect((await runCli(['inspect', '--help'])).stdout).toContain('$ crab inspect IMAGE');
  });
});

describe('text an image controls', () => {
  it('reaches the terminal with its control characters shown as pictures, not sent', async () => {
    const esc = '\u001b';
    // Prose and schemas are read as written (a version or a name with such characters is refused; see
    // control-characters.test.ts).
    const hostile = sampleManifest({
      description: `Looks fine${esc}]0;owned\u0007\r\nsecond line${esc}[2J`,
      tools: [
        {
          name: 'echo',
          description: `clear${esc}[H`,
          arguments: { type: 'object', properties: { [`q${esc}[31m`]: { enum: [`a${esc}c`, `s\u009b31m`] } } },
        },
      ],
    });
    const file = await scratch.write('hostile.wasm', await buildImage(MINIMAL_WAT, hostile));
    const r = await runCli(['inspect', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(r.stdout.split('\n')).toContain('Looks fine\u241b]0;owned\u2407\u240d');
    expect(r.stdout.split('\n')).toContain('second line\u241b[2J');
    expect(r.stdout).toContain('q\u241b[31m?: "a\u241bc"|"s\ufffd31m"');
    // With colour on, the only escapes are the ones crab writes.
    const coloured = await runCli(['inspect', file], { env: { FORCE_COLOR: '1' } });
    expect(coloured.stdout).not.toContain(`${esc}[2J`);
    expect(coloured.stdout).not.toContain(`${esc}]0;`);
    // --json is the manifest as it is, in JSON that escapes the characters, C1 included.
    const json = await runCli(['inspect', '--json', file]);
    expect(json.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(json.stdout).toContain('s\\u009b31m');
    expect(JSON.parse(json.stdout)).toEqual(hostile);
  });
});

describe('crab inspect --json IMAGE', () => {
  it('prints exactly the merged manifest and nothing else', async () => {
    const r = await runCli(['inspect', '--json', files.image!]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toEqual(manifest);
  });

  it('takes --json after the image too, and reads ELF', async () => {
    const r = await runCli(['inspect', files.elf!, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(manifest);
  });

  it('answers the same through oclif as through the fast path, for a manifest and for an error', async () => {
    // `--` makes the command line one the fast path does not take.
    for (const file of [files.image!, files.truncated!, files.missing!]) {
      const fast = await runCli(['inspect', '--json', file]);
      const full = await runCli(['inspect', '--json', '--', file]);
      expect(full).toEqual(fast);
    }
  });
});

describe('a reader that stops early', () => {
  for (const args of [['inspect', '--json'], ['inspect']]) {
    it(`ends \`crab ${args.join(' ')}\` quietly with status 0`, async () => {
      const child = spawn(process.execPath, ['bin/crab', ...args, files.large!], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      // Like `| head -c 1`: take the first chunk, then close the pipe.
      child.stdout.once('data', () => child.stdout.destroy());
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(stderr).toBe('');
      expect(code).toBe(0);
    });
  }
});

describe('colour', () => {
  it('is off when stdout is not a terminal', async () => {
    const r = await runCli(['inspect', files.image!]);
    expect(r.stdout).not.toMatch(ANSI);
  });

  it('is on with FORCE_COLOR, and NO_COLOR turns it off even then', async () => {
    expect((await runCli(['inspect', files.image!], { env: { FORCE_COLOR: '1' } })).stdout).toMatch(ANSI);
    expect((await runCli(['inspect', files.image!], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } })).stdout).not.toMatch(ANSI);
    expect((await runCli(['inspect', files.image!], { env: { NO_COLOR: '1' } })).stdout).not.toMatch(ANSI);
  });

  it('never reaches --json output', async () => {
    for (const args of [
      ['inspect', '--json', files.image!],
      ['inspect', '--json', '--', files.image!],
    ]) {
      const r = await runCli(args, { env: { FORCE_COLOR: '3' } });
      expect(r.stdout).not.toMatch(ANSI);
      expect(JSON.parse(r.stdout)).toEqual(manifest);
    }
  });
});

describe('crab inspect on bad input', () => {
  const cases: { name: string; file: () => string; code: string; line: (f: string) => RegExp }[] = [
    {
      name: 'a missing file',
      file: () => files.missing!,
      code: 'file-not-found',
      line: (f) => exact(`crab: cannot read '${f}': no such file`),
    },
    {
      name: 'a directory',
      file: () => files.directory!,
      code: 'is-a-directory',
      line: (f) => exact(`crab: cannot read '${f}': it is a directory`),
    },
    {
      name: 'a text file',
      file: () => files.text!,
      code: 'not-an-image',
      line: (f) => prefixed(`crab: '${f}' is not a berm image: neither a WebAssembly module nor an ELF file`),
    },
    {
      name: 'a component',
      file: () => files.component!,
      code: 'component-not-supported',
      line: (f) => prefixed(`crab: '${f}' is not a berm image: `, /component/),
    },
    {
      name: 'a truncated image',
      file: () => files.truncated!,
      code: 'truncated',
      line: (f) => prefixed(`crab: '${f}' is not a berm image: `, /byte \d+/),
    },
    {
      name: 'an image without a manifest',
      file: () => files.bare!,
      code: 'no-manifest',
      line: (f) => prefixed(`crab: '${f}' has no berm manifest: `, /\.berm\.abi/),
    },
    {
      name: 'a record that is not JSON',
      file: () => files.badRecord!,
      code: 'bad-record',
      line: (f) => prefixed(`crab: '${f}' has a bad manifest record: `, /byte \d+/),
    },
    {
      name: 'an invalid manifest',
      file: () => files.invalid!,
      code: 'invalid-manifest',
      line: (f) => prefixed(`crab: '${f}' has an invalid manifest at /tools/0/name`),
    },
  ];

  for (const c of cases) {
    it(`says what is wrong with ${c.name} in one line and exits 2`, async () => {
      const file = c.file();
      const r = await runCli(['inspect', file]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(c.line(file));
    });

    it(`reports ${c.name} as one JSON error document with --json`, async () => {
      const file = c.file();
      const r = await runCli(['inspect', '--json', file]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('');
      const { error } = JSON.parse(r.stdout);
      expect(error).toMatchObject({ code: c.code, file });
      expect(`crab: ${error.message}\n`).toMatch(c.line(file));
    });
  }

  it('names the offset for framing errors in the JSON error', async () => {
    const { error } = JSON.parse((await runCli(['inspect', '--json', files.truncated!])).stdout);
    expect(typeof error.offset).toBe('number');
    const invalid = JSON.parse((await runCli(['inspect', '--json', files.invalid!])).stdout);
    expect(invalid.error.path).toBe('/tools/0/name');
  });
});

describe('usage errors', () => {
  it('a missing argument exits 2 with a pointer to help, under the name typed', async () => {
    const crab = await runCli(['inspect']);
    expect(crab).toEqual({ code: 2, stdout: '', stderr: "crab: missing argument IMAGE; see 'crab inspect --help'\n" });
    const berm = await runCli(['inspect'], { bin: 'berm' });
    expect(berm.stderr).toBe("berm: missing argument IMAGE; see 'berm inspect --help'\n");
  });

  it('stays one line when NODE_ENV puts oclif in development mode', async () => {
    for (const NODE_ENV of ['development', 'test']) {
      const r = await runCli(['inspect'], { env: { NODE_ENV } });
      expect(r.stderr).toBe("crab: missing argument IMAGE; see 'crab inspect --help'\n");
    }
  });

  it('an unknown flag or an extra argument exits 2', async () => {
    const flag = await runCli(['inspect', '--colour', files.image!]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/^crab: .*--colour.*; see 'crab inspect --help'\n$/);
    const extra = await runCli(['inspect', files.image!, files.image!]);
    expect(extra.code).toBe(2);
    expect(extra.stderr.split('\n')).toHaveLength(2);
  });

  it('an unknown command exits 2', async () => {
    const r = await runCli(['inpsect', files.image!], { bin: 'berm' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^berm: .*inpsect.*; see 'berm --help'\n$/);
  });

  it('with --json, a usage error is a JSON error document on stdout', async () => {
    const r = await runCli(['inspect', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ error: { code: 'usage', message: "missing argument IMAGE; see 'crab inspect --help'" } });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The whole of stderr is this one line. */
function exact(line: string): RegExp {
  return new RegExp(`^${escape(line)}\\n$`);
}

/** One line starting with `start`, containing `then` if given. */
function prefixed(start: string, then?: RegExp): RegExp {
  return new RegExp(`^${escape(start)}[^\\n]*${then ? `${then.source}[^\\n]*` : ''}\\n$`);
}
