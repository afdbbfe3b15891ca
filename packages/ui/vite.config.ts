// The page, bundled into dist/web: index.html, and the script and stylesheet under assets/ with
// hashes in their names (bermd serves those as immutable). JSX is Preact's, compiled by esbuild.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('./web', import.meta.url)),
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('./dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The page is one script; vite's preload helper would only add an inline-free polyfill it never needs.
    modulePreload: false,
    // Everything is a file of its own: the page's CSP allows no inline script or style, and no data: scripts.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
