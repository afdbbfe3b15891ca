// When a bundle the build writes (scripts/bundle.js) may stand in for its modules (src/runtime/bundles.ts):
// only while it is newer than every compile of what it holds, so that a compile alone never leaves a
// command running the code it replaced. A file's times are set by hand to stand for a bundle.
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleIsFresh } from '../dist/runtime/bundles.js';

describe('a bundle', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berm-bundles-'));
    file = join(dir, 'bundle.js');
    await writeFile(file, '');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stands in for its modules when it is newer than every compile of them', async () => {
    const later = Date.now() / 1000 + 3600;
    await utimes(file, later, later);
    expect(bundleIsFresh(pathToFileURL(file))).toBe(true);
  });

  it('does not when a compile came after it, nor when it is missing', async () => {
    await utimes(file, 1, 1);
    expect(bundleIsFresh(pathToFileURL(file))).toBe(false);
    expect(bundleIsFresh(pathToFileURL(join(dir, 'missing.js')))).toBe(false);
  });
});
