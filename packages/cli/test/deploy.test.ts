// crab deploy, berm ls and berm undeploy against a real bermd: their output and their exit codes
// (0 done, 1 refused or not found, 2 bad input, 3 daemon unreachable).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildElf } from '../../../test/helpers/elf.js';
import { harnessImage, manifestWithTools, sampleManifest } from '../../../test/helpers/harness.js';
import { closedPort } from '../../../test/helpers/loopback.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { Scratch, runCli } from './helpers/cli.js';

let d: RunningDaemon;
let scratch: Scratch;
const files: Record<string, string> = {};

beforeAll(async () => {
  // A per-harness concurrency of its own, so `berm ls` shows the same limits on every machine.
  d = await startDaemon({ args: ['--max-concurrency', '2'] });
  scratch = await Scratch.create();
  files.echo = await scratch.write('echo.wasm', await harnessImage(manifestWithTools(['echo', 'size'])));
  files.caller = await scratch.write(
    'caller.wasm',
    await harnessImage(sampleManifest({ version: '2.0.0', deps: { programs: ['weather'], syscalls: {}, secrets: [] } })),
  );
  files.refused = await scratch.write(
    'refused.wasm',
    await harnessImage(manifestWithTools(['echo', 'size']), { omit: ['berm_tool_size'] }),
  );
  files.text = await scratch.write('notes.txt', 'not an image');
  files.elf = await scratch.write(
    'echo.elf',
    buildElf({
      bits: 64,
      endian: 'little',
      sections: [{ name: '.berm.abi', data: new TextEncoder().encode(JSON.stringify(sampleManifest())) }],
    }).bytes,
  );
});

afterAll(async () => {
  await d.stop();
  await removeDir(d.stateDir);
  await scratch.remove();
});

const env = () => ({ BERM_URL: d.url, BERM_TOKEN: undefined });

describe('crab deploy', { timeout: 90_000 }, () => {
  it('deploys (exit 0), says whether it replaced, and prints --json as the daemon answered', async () => {
    let r = await runCli(['deploy', 'echo', files.echo!], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^deployed echo 0\.1\.0 \([0-9a-f]{12}\)\n {2}tools: {2}echo, size\n {2}events: none\nhistory: deploy by anonymous via \S+ at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/,
    );
    expect(r.stderr).toBe('');

    r = await runCli(['deploy', '--json', 'echo', files.echo!], { env: env() });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ name: 'echo', version: '0.1.0', tools: ['echo', 'size'], reported: [], notices: [], replaced: true });
    expect(result.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('says which declared program is not deployed, and deploys anyway', async () => {
    const r = await runCli(['deploy', '--url', d.url, 'caller', files.caller!], { env: { BERM_URL: undefined } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('deployed caller 2.0.0');
    expect(r.stdout).toMatch(/notice: program weather is declared in deps\.programs but not deployed/);
  });

  it('exits 1 when the daemon refuses the image, with its code', async () => {
    let r = await runCli(['deploy', 'bad', files.refused!], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^crab: cannot deploy '.*refused\.wasm' as bad: the image does not export berm_tool_size/);

    r = await runCli(['deploy', '--json', 'bad', files.refused!], { env: env() });
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stdout);
    expect(error).toMatchObject({ code: 'missing-export', status: 422, problems: [{ code: 'missing-export', export: 'berm_tool_size' }] });

    r = await runCli(['deploy', 'elf', files.elf!], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('only wasm images can be deployed');
  });

  it('exits 2 on bad input: a name with a dot, a missing file, a file that is no image, no arguments', async () => {
    const cases: [string[], RegExp][] = [
      [['deploy', 'a.b', files.echo!], /not allowed.*no dots/],
      [['deploy', 'x', path.join(scratch.dir, 'missing.wasm')], /no such file/],
      [['deploy', 'x', files.text!], /neither a WebAssembly module nor an ELF file/],
      [['deploy', 'x'], /missing argument IMAGE/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, { env: env() });
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stderr).toMatch(message);
    }
    const listed = await runCli(['ls', '--json'], { env: env() });
    expect(JSON.parse(listed.stdout).map((h: { name: string }) => h.name)).not.toContain('x');
  });

  it('refuses a bad limit with the words bermd answers the same value in the deploy query with (exit 2, bad-limit)', async () => {
    const image = await readFile(files.echo!);
    for (const [flag, parameter, value] of [
      ['--max-memory', 'max_memory', '1K'],
      ['--call-timeout', 'timeout', 'soon'],
      ['--max-result-size', 'max_result_size', '12X'],
      ['--max-concurrency', 'max_concurrency', '0'],
    ] as const) {
      const answer = await fetch(`${d.url}/harnesses/limited?${parameter}=${value}`, { method: 'PUT', body: image });
      expect(answer.status).toBe(400);
      const { error } = (await answer.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('bad-limit');
      const r = await runCli(['deploy', '--json', 'limited', files.echo!, flag, value], { env: env() });
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout)).toEqual({ error: { code: 'bad-limit', message: error.message, parameter } });
      const plain = await runCli(['deploy', 'limited', files.echo!, flag, value], { env: env() });
      expect(plain.stderr).toBe(`crab: ${error.message}\n`);
    }
    expect((await fetch(`${d.url}/harnesses/limited`)).status).toBe(404);
  });

  it('exits 3 when the daemon is not running, with a hint to start it', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    for (const args of [['deploy', 'echo', files.echo!], ['ls'], ['undeploy', 'echo']]) {
      const r = await runCli(args, { bin: 'berm', env: { BERM_URL: url } });
      expect([args, r.code]).toEqual([args, 3]);
      expect(r.stderr).toContain(`berm: could not reach bermd at ${url}`);
      expect(r.stderr).toContain('Start it with `bermd`');
    }
    const r = await runCli(['ls', '--json', '--url', url], { bin: 'berm' });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error.code).toBe('daemon-unreachable');
  });
});

describe('berm ls and berm undeploy', { timeout: 90_000 }, () => {
  it('lists the deployed harnesses as a table and as JSON', async () => {
    let r = await runCli(['ls'], { bin: 'berm', env: env() });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+TOOLS\s+DIGEST\s+DEPLOYED\s+DEPLOYED BY\s+LAST USED\s+LIMITS\s+GRANTS$/);
    const rows = lines.slice(1).map((l) => l.split(/ {3,}/));
    expect(rows.map((row) => row.slice(0, 3))).toEqual([
      ['caller', '2.0.0', 'echo'],
      ['echo', '0.1.0', 'echo, size'],
    ]);
    for (const row of rows) {
      expect(row[3]).toMatch(/^[0-9a-f]{12}$/);
      // This bermd asks for no token: every deploy is anonymous's.
      expect(row[5]).toBe('anonymous');
      expect(row[6]).toBe('never');
      // The daemon's limits (time/memory/result/calls at once), and nothing declared, so nothing granted.
      expect(row.slice(7)).toEqual(['10s/64M/1M/2', '-']);
    }

    r = await runCli(['ls', '--json'], { bin: 'berm', env: env() });
    const list = JSON.parse(r.stdout) as { name: string; digest: string; deployed_by: string; last_used_at: null }[];
    expect(list.map((h) => [h.name, h.deployed_by])).toEqual([
      ['caller', 'anonymous'],
      ['echo', 'anonymous'],
    ]);
    expect(rows[1]![3]).toBe(list[1]!.digest.slice('sha256:'.length, 'sha256:'.length + 12));
  });

  it('undeploys (exit 0), then answers 1 for a name that is not deployed', async () => {
    let r = await runCli(['undeploy', 'caller'], { bin: 'berm', env: env() });
    expect([r.code, r.stdout]).toEqual([0, 'undeployed caller\n']);
    r = await runCli(['undeploy', '--json', 'caller'], { bin: 'berm', env: env() });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'not-found', status: 404 });
    r = await runCli(['ls', '--json'], { bin: 'berm', env: env() });
    expect(JSON.parse(r.stdout).map((h: { name: string }) => h.name)).toEqual(['echo']);
  });

  it('prints an empty list plainly', async () => {
    const empty = await startDaemon();
    try {
      const r = await runCli(['ls'], { bin: 'berm', env: { BERM_URL: empty.url } });
      expect([r.code, r.stdout]).toEqual([0, 'no harnesses deployed\n']);
    } finally {
      await empty.stop();
      await removeDir(empty.stateDir);
    }
  });
});

describe('crab inspect with a daemon address', { timeout: 90_000 }, () => {
  it('marks each declared program that is not deployed there, and only with an address', async () => {
    const caller = await scratch.write(
      'two-deps.wasm',
      await harnessImage(sampleManifest({ deps: { programs: ['echo', 'weather'], syscalls: {}, secrets: [] } })),
    );
    expect((await runCli(['deploy', 'echo', files.echo!], { env: env() })).code).toBe(0);

    let r = await runCli(['inspect', caller, '--url', d.url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('weather (not deployed)');
    expect(r.stdout).not.toContain('echo (not deployed)');
    expect(r.stdout).toMatch(/\becho\b/);

    r = await runCli(['inspect', caller], { env: env() });
    expect(r.stdout).toContain('weather (not deployed)');

    r = await runCli(['inspect', caller]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('weather');
    expect(r.stdout).not.toContain('not deployed');

    r = await runCli(['inspect', '--json', caller, '--url', d.url]);
    expect(JSON.parse(r.stdout).deps.programs).toEqual(['echo', 'weather']);

    r = await runCli(['inspect', caller, '--url', `http://127.0.0.1:${await closedPort()}`]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('could not reach bermd');
  });
});

describe('the daemon commands with a token', { timeout: 90_000 }, () => {
  it('send --token or BERM_TOKEN; without either the daemon says unauthorized (exit 2), and how to give one', async () => {
    const dir = await tempDir('berm-cli-token-');
    await writeFile(path.join(dir, 'token'), 'cli-token');
    const guarded = await startDaemon({ args: ['--token-file', path.join(dir, 'token')] });
    try {
      let r = await runCli(['deploy', 'echo', files.echo!], { env: { BERM_URL: guarded.url, BERM_TOKEN: 'cli-token' } });
      expect(r.code).toBe(0);
      r = await runCli(['ls'], { bin: 'berm', env: { BERM_URL: guarded.url, BERM_TOKEN: undefined } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('Authorization: Bearer');
      expect(r.stderr).toContain(`run berm login --url ${guarded.url}, or give one with --token or BERM_TOKEN`);
      // --token is the flag BERM_TOKEN stands for, and wins over it.
      r = await runCli(['ls', '--json', '--token', 'cli-token'], { bin: 'berm', env: { BERM_URL: guarded.url, BERM_TOKEN: 'wrong' } });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).map((h: { name: string }) => h.name)).toEqual(['echo']);
      r = await runCli(['undeploy', 'echo', '--token', 'wrong'], { bin: 'berm', env: { BERM_URL: guarded.url } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('refused the token given with --token or BERM_TOKEN');
    } finally {
      await guarded.stop();
      await removeDir(guarded.stateDir);
      await removeDir(dir);
    }
  });
});
