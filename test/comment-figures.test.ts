// Measured figures go stale where nobody re-measures them: the README and docs/decisions.md keep them,
// beside how they were measured, and a source comment says why the code is as it is. This reads the
// comments of every package's sources and build scripts for the shapes figures take.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commentFigures } from './helpers/comment-figures.js';
import { filesUnder } from './helpers/tree.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Every package's sources and build scripts: TypeScript, AssemblyScript and JavaScript. */
function sources(): string[] {
  const code = (name: string): boolean => /\.(?:ts|tsx|js|mjs)$/.test(name);
  return readdirSync(path.join(root, 'packages'))
    .flatMap((pkg) => ['src', 'scripts', 'assembly', 'web/src'].flatMap((dir) => filesUnder(root, path.join('packages', pkg, dir), code)))
    .sort();
}

describe('figures in source comments', () => {
  it('recognises measured figures and lets units of the code itself by', () => {
    const text = [
      '// took 38-49 µs of the main thread',
      ' * its throughput is 0.27× the bare server',
      ' * costs about 2.3x a bare `node -e 0`',
      ' * measured 1.47 ms with the arena',
      '/** `500ms`, `10s`: in the grammar. A time limit is at least 1 ms. */',
      'const x = 2 * 3; // the pool is twice the cores',
      "const label = '5 µs'; // not a comment's figure",
    ].join('\n');
    expect(commentFigures(text)).toEqual([1, 2, 3, 4]);
  });

  it('no package source carries one', () => {
    const found = sources().flatMap((file) => commentFigures(readFileSync(path.join(root, file), 'utf8')).map((line) => `${file}:${line}`));
    expect(found, 'move the figures to the README or docs/decisions.md; say why in the comment').toEqual([]);
  });
});
