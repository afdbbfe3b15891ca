// The check that keeps a bare `npx vitest run` from testing a stale dist/: a throwaway workspace whose
// file times are set by hand.
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staleBuilds, staleBundle } from './build-freshness.js';

describe('staleBuilds', () => {
  let root: string;
  const at = (file: string, seconds: number): Promise<void> => utimes(path.join(root, file), seconds, seconds);

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'berm-freshness-'));
    await writeFile(
      path.join(root, 'tsconfig.json'),
      JSON.stringify({ files: [], references: [{ path: 'packages/a' }, { path: 'packages/b' }] }),
    );
    for (const p of ['a', 'b']) {
      await mkdir(path.join(root, 'packages', p, 'src', 'inner'), { recursive: true });
      await writeFile(path.join(root, 'packages', p, 'tsconfig.json'), '{}');
      await writeFile(path.join(root, 'packages', p, 'src', 'index.ts'), 'export {};');
      await writeFile(path.join(root, 'packages', p, 'src', 'inner', 'deep.ts'), 'export {};');
      await writeFile(path.join(root, 'packages', p, 'tsconfig.tsbuildinfo'), '{}');
    }
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function times(
    p: string,
    { config, index, deep, built }: { config: number; index: number; deep: number; built: number },
  ): Promise<void> {
    await at(`packages/${p}/tsconfig.json`, config);
    await at(`packages/${p}/src/index.ts`, index);
    await at(`packages/${p}/src/inner/deep.ts`, deep);
    await at(`packages/${p}/tsconfig.tsbuildinfo`, built);
  }

  it('finds nothing when every build is newer than its sources and its tsconfig', async () => {
    await times('a', { config: 100, index: 200, deep: 300, built: 400 });
    await times('b', { config: 100, index: 200, deep: 300, built: 300 });
    expect(staleBuilds(root)).toEqual([]);
  });

  it('names the newest source, however deep, or the tsconfig, changed after the build', async () => {
    await times('a', { config: 100, index: 200, deep: 500, built: 400 });
    await times('b', { config: 450, index: 200, deep: 300, built: 400 });
    expect(staleBuilds(root)).toEqual([
      `${path.join('packages', 'a', 'src', 'inner', 'deep.ts')} changed after packages/a was last built`,
      `${path.join('packages', 'b', 'tsconfig.json')} changed after packages/b was last built`,
    ]);
  });

  it('says when a project has never been built', async () => {
    await times('a', { config: 100, index: 200, deep: 300, built: 400 });
    await rm(path.join(root, 'packages', 'b', 'tsconfig.tsbuildinfo'));
    expect(staleBuilds(root)).toEqual(['packages/b has never been built']);
  });
});

describe('staleBundle', () => {
  let root: string;
  const at = (file: string, seconds: number): Promise<void> => utimes(path.join(root, 'packages', file), seconds, seconds);
  const bundles = ['bermd/dist/runtime/embedded-bundle.cjs', 'bermd/dist/runtime/worker-bundle.cjs'];
  const records = [
    'bermd/tsconfig.tsbuildinfo',
    'manifest/tsconfig.tsbuildinfo',
    'manifest/dist/manifest-validator.js',
    'protocol/tsconfig.tsbuildinfo',
  ];

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'berm-freshness-bundle-'));
    for (const file of records) {
      await mkdir(path.dirname(path.join(root, 'packages', file)), { recursive: true });
      await writeFile(path.join(root, 'packages', file), '{}');
    }
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('says when a bundle has never been built', () => {
    expect(staleBundle(root)).toEqual(bundles.map((bundle) => `packages/${bundle} has never been built`));
  });

  it('finds nothing when the bundles are newer than every build record they hold, and names each that is newer', async () => {
    await mkdir(path.join(root, 'packages/bermd/dist/runtime'), { recursive: true });
    for (const bundle of bundles) await writeFile(path.join(root, 'packages', bundle), '');
    for (const file of records) await at(file, 100);
    await at(bundles[0]!, 200);
    await at(bundles[1]!, 400);
    expect(staleBundle(root)).toEqual([]);
    await at('manifest/dist/manifest-validator.js', 300);
    await at('protocol/tsconfig.tsbuildinfo', 500);
    expect(staleBundle(root)).toEqual([
      `packages/manifest/dist/manifest-validator.js changed after packages/${bundles[0]} was built`,
      `packages/protocol/tsconfig.tsbuildinfo changed after packages/${bundles[0]} was built`,
      `packages/protocol/tsconfig.tsbuildinfo changed after packages/${bundles[1]} was built`,
    ]);
  });
});
