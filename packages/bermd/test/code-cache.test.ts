// A CommonJS bundle loaded with the code cache the build wrote beside it (src/runtime/code-cache.ts): the
// module is the file's code, run once as `require` runs it (its exports, `require` relative to it, its
// own file and directory), whether V8 takes the cache, refuses it, or there is none; a cache older than
// the file is not given to V8 at all. The bundles the build writes come with caches V8 takes.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeCachePath, requireBundle, writeCodeCache } from '../dist/runtime/code-cache.js';

const MODULE = `
const { basename } = require('node:path');
const sibling = require('./sibling.cjs');
globalThis.__codeCacheRuns = (globalThis.__codeCacheRuns ?? 0) + 1;
exports.answer = (n) => n * 2 + sibling.one;
module.exports.where = [basename(__filename), basename(__dirname) === require('node:path').basename(__dirname)];
`;

describe('a bundle loaded with its code cache', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berm-code-cache-'));
    await writeFile(join(dir, 'sibling.cjs'), 'exports.one = 1;\n');
    for (const name of ['cached.cjs', 'stale.cjs', 'refused.cjs', 'bare.cjs']) await writeFile(join(dir, name), MODULE);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is the file run once as require runs it, with a cache, a cache V8 refuses, or none', async () => {
    await writeCodeCache(join(dir, 'cached.cjs'), (exports) => (exports as { answer(n: number): number }).answer(1));
    await writeCodeCache(join(dir, 'stale.cjs'), () => undefined);
    await utimes(codeCachePath(join(dir, 'stale.cjs')), 1, 1);
    await writeFile(codeCachePath(join(dir, 'refused.cjs')), 'not a code cache');
    const runs = (globalThis as { __codeCacheRuns?: number }).__codeCacheRuns ?? 0;
    for (const name of ['cached.cjs', 'stale.cjs', 'refused.cjs', 'bare.cjs']) {
      const loaded = requireBundle(join(dir, name)) as { answer(n: number): number; where: unknown[] };
      expect(loaded.answer(20)).toBe(41);
      expect(loaded.where).toEqual([name, true]);
      expect(requireBundle(join(dir, name))).toBe(loaded);
    }
    // The two written by writeCodeCache ran there already; the others ran once each here.
    expect((globalThis as { __codeCacheRuns?: number }).__codeCacheRuns).toBe(runs + 2);
  });

  // The build's caches are made by the Node that builds; the suite also runs under other lines, whose V8
  // has none of its own (and would refuse the build's): there the bundle loads without one, above.
  const built = ['ajv-bundle.cjs', 'embedded-bundle.cjs'].map((name) => fileURLToPath(new URL(`../dist/runtime/${name}`, import.meta.url)));
  const ownV8 = built.every((file) => existsSync(codeCachePath(file)));
  it.runIf(ownV8).each(built)("of the build's, %s, is one V8 takes", async (file) => {
    const source = await readFile(file, 'utf8');
    const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n});`, {
      filename: file,
      cachedData: await readFile(codeCachePath(file)),
    });
    expect(script.cachedDataRejected).toBe(false);
  });

  it("names a cache by the V8 that made it, so another V8's is never read", () => {
    expect(codeCachePath('/b/x.cjs')).toBe(`/b/x.cjs.v8-${process.versions.v8}.cache`);
  });
});
