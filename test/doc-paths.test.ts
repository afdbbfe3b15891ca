// The paths the documentation cites are paths in this repository. A moved or renamed file leaves
// README sentences pointing at nothing; this reads every Markdown file the project ships and checks
// each relative link and each code span that names a file or folder of the repository.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { citedPaths } from './helpers/doc-paths.js';
import { filesUnder } from './helpers/tree.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The Markdown the project ships: the root's, docs/, and each package's and example's. */
function documents(): string[] {
  const md = (name: string): boolean => name.endsWith('.md');
  return ['README.md', ...['docs', 'packages', 'examples', 'bench'].flatMap((dir) => filesUnder(root, dir, md))].sort();
}

describe('paths cited by the documentation', () => {
  it('finds the code spans and links that name files, and only those', () => {
    const text = [
      'See [the contract](docs/contract.md#images) and `packages/bermd/src/options.ts`.',
      'An example path `weather/build/weather.wasm`, a URL [spec](https://example.com/a.md), a flag `--max-sessions`.',
      'A placeholder `packages/<name>/README.md`, `test/NAME.test.mjs` and a pattern `packages/*/test/**`, a span `test/hosts.test.ts`.',
      'An import specifier `../dist/deploy/index.js`, a [relative link](../docs/deploy.md).',
    ].join('\n');
    const dirs = new Set(['docs', 'packages', 'test']);
    expect(citedPaths(text, (first) => dirs.has(first))).toEqual([
      'docs/contract.md',
      '../docs/deploy.md',
      'packages/bermd/src/options.ts',
      'test/hosts.test.ts',
    ]);
  });

  for (const doc of documents()) {
    it(`${doc} cites only paths that exist`, () => {
      const base = path.dirname(path.join(root, doc));
      const bases = [base, root];
      // A span is read as a path when its first segment is an entry of the document's folder or of the root.
      const isEntry = (first: string): boolean => bases.some((b) => existsSync(path.join(b, first)));
      const missing = citedPaths(readFileSync(path.join(root, doc), 'utf8'), isEntry).filter(
        (cited) => !bases.some((b) => existsSync(path.join(b, cited))),
      );
      expect(missing, `${doc} cites paths that do not exist`).toEqual([]);
    });
  }
});
