// Builds the page into dist/web with vite (run by the workspace's `npm run build`), then prints the
// size of what a browser downloads, gzipped, since the page's script has a budget (README).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
await build({ configFile: path.join(root, 'vite.config.ts') });

const assets = path.join(root, 'dist', 'web', 'assets');
for (const name of (await readdir(assets)).sort()) {
  const bytes = await readFile(path.join(assets, name));
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`@berm/ui: assets/${name} ${kb(bytes.length)}, ${kb(gzipSync(bytes).length)} gzipped`);
}
