// The name a project gives its image: `crab build` writes `DIR/build/<name>.wasm` and prints the name, so
// a name from package.json (or the directory) outside the harness name rule is refused before anything
// is compiled or written, and nothing of it reaches the terminal raw; `crab new` holds its NAME to the
// same. Each test writes its own project into a scratch directory of its own.
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { controlCharacters, runCli, runCliBytes, Scratch } from './helpers/cli.js';

/** A test that compiles: a build takes seconds, more on a machine running the other test files. */
const BUILDS = 180_000;

const TOOL = 'export function ping(): i32 {\n  return 1;\n}\n';

let scratch: Scratch;

beforeEach(async () => {
  scratch = await Scratch.create();
});
afterEach(async () => {
  await scratch.remove();
});

/** Every file and directory under `dir`, relative to it, sorted. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map((e) => relative(dir, join(dir, e))).sort();
}

/** Writes a project at `dir` (package.json as given, or none) with one tool. */
async function project(dir: string, packageJson?: object): Promise<void> {
  await mkdir(join(dir, 'assembly'), { recursive: true });
  await writeFile(join(dir, 'assembly', 'index.ts'), TOOL);
  if (packageJson !== undefined) await writeFile(join(dir, 'package.json'), `${JSON.stringify(packageJson)}\n`);
}

describe('crab build', () => {
  it('refuses a package.json name that climbs out of the project (../../../../x), with exit 2 and nothing written anywhere', async () => {
    // Deep enough that build/../../../../x.wasm would land inside the scratch directory, where it is looked for.
    const dir = join(scratch.dir, 'a', 'b', 'c', 'd', 'e', 'project');
    await project(dir, { name: '../../../../x' });
    const before = await tree(scratch.dir);

    const result = await runCli(['build', dir]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `crab: ${join(dir, 'package.json')}: the name "../../../../x" is not a harness name, and it names the image (build/<name>.wasm, without the scope): use 1 to 64 letters, digits, '_' or '-' (no dots, slashes or spaces), as in "weather" or "@acme/weather"\n`,
    );
    const asJson = await runCli(['build', dir, '--json']);
    expect(asJson.code).toBe(2);
    expect(JSON.parse(asJson.stdout)).toEqual({
      error: expect.objectContaining({ code: 'bad-package-name', file: join(dir, 'package.json'), name: '../../../../x' }),
    });

    expect(await tree(scratch.dir)).toEqual(before);
  });

  it('refuses a name holding escape sequences, and writes none of them raw', async () => {
    const dir = join(scratch.dir, 'project');
    // ESC, which JSON quoting escapes, and CSI as one C1 character, which it does not.
    await project(dir, { name: '\u001b[31mred\u009b2J' });
    const result = await runCliBytes(['build', dir]);
    expect(result.code).toBe(2);
    expect(result.stdout.length).toBe(0);
    expect(controlCharacters(result.stderr)).toEqual([]);
    expect(result.stderr.toString('utf8')).toContain('the name "\\u001b[31mred\ufffd2J" is not a harness name');

    const asJson = await runCliBytes(['build', dir, '--json']);
    expect(asJson.code).toBe(2);
    expect(controlCharacters(asJson.stdout)).toEqual([]);
    expect(JSON.parse(asJson.stdout.toString('utf8')).error).toMatchObject({ code: 'bad-package-name', name: '\u001b[31mred\u009b2J' });
    expect(await tree(dir)).toEqual(['assembly', 'assembly/index.ts', 'package.json']);
  });

  it("refuses the directory's name when package.json gives none and it is not a harness name", async () => {
    const dir = join(scratch.dir, 'my.harness');
    await project(dir);
    const result = await runCli(['build', dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `crab: ${dir} has no package.json, and the directory's name "my.harness", which would name the image, is not a harness name: give package.json a "name" of 1 to 64 letters, digits, '_' or '-' (no dots, slashes or spaces), as in "weather"\n`,
    );
    expect(await tree(dir)).toEqual(['assembly', 'assembly/index.ts']);
  });

  it(
    'builds a project whose scoped name is a harness name once the scope is taken off',
    async () => {
      const dir = join(scratch.dir, 'project');
      await project(dir, { name: '@acme/scoped_ok-1', version: '1.0.0' });
      const result = await runCli(['build', dir]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const image = join(dir, 'build', 'scoped_ok-1.wasm');
      expect(result.stdout.split('\n')[0]).toBe(image);
      expect(result.stdout.split('\n')[1]).toMatch(/^built scoped_ok-1 1\.0\.0: 1 tool \(ping\), 0 events, /);
      expect((await stat(image)).size).toBeGreaterThan(0);
      expect(await readdir(join(dir, 'build'))).toEqual(['scoped_ok-1.wasm']);
    },
    BUILDS,
  );
});

describe('crab new', () => {
  it('refuses a NAME that climbs out of the directory or holds escape sequences, writing nothing and nothing raw', async () => {
    const inner = join(scratch.dir, 'inner');
    await mkdir(inner);
    for (const name of ['../x', '\u001b[31mred\u009b2J']) {
      const result = await runCliBytes(['new', name], { cwd: inner });
      expect(result.code).toBe(2);
      expect(controlCharacters(result.stderr)).toEqual([]);
      expect(result.stderr.toString('utf8')).toMatch(/is not a project name: lowercase letters, digits, _ and -/);
    }
    expect(await tree(scratch.dir)).toEqual(['inner']);
  });

  it('prints the directory it wrote with its control characters made visible', async () => {
    const dir = join(scratch.dir, 'out\u001b[2J');
    const result = await runCliBytes(['new', 'fine', '--dir', dir]);
    expect(result.code).toBe(0);
    expect(controlCharacters(result.stdout)).toEqual([]);
    expect(result.stdout.toString('utf8')).toContain(`wrote ${join(scratch.dir, 'out\u241b[2J')}/: package.json`);
    expect(await readdir(dir)).toContain('package.json');
  });
});
