#!/usr/bin/env node
// Writes, after `tsc -b`, the two files a command that runs the embedded runtime loads in place of the
// many it is compiled to (docs/decisions.md, "`crab run` starts quickly"):
//
// - dist/runtime/ajv-bundle.cjs: ajv's 2020-12 class and its standalone generator as one CommonJS file
//   (runtime/ajv.ts loads it), in place of ajv's ninety files, each resolved and read on its own; and
//   beside it its V8 code cache (ajv-bundle.cjs.v8-VERSION.cache, runtime/code-cache.ts), made after compiling a
//   harness's validators, which is what a start runs of it.
// - dist/runtime/embedded-bundle.js: the embedded runtime's door (dist/embedded/index.js) with every module
//   of bermd, @berm/manifest and @berm/protocol it imports, as one ES module; `bermd/runtime` loads it
//   (dist/embedded/entry.js, which falls back to the modules themselves when it is older than a build).
//   Packages from the registry stay outside it, loaded as they are.
//
// Both sit in dist/runtime/, beside the modules whose `import.meta.url` they carry: the worker script
// (worker.js) and the ajv bundle are found relative to it, from the bundle as from those modules.
// The bundle is the compiled code as it is, modules concatenated: no minifying, and a source map.
//
// Usage: node scripts/bundle.js
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (path) => fileURLToPath(new URL(`../dist/${path}`, import.meta.url));

/** Registry packages stay outside the bundle; the workspace's own packages (@berm/*) go in. */
const workspaceOnly = {
  name: 'workspace-only',
  setup(plugin) {
    plugin.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@berm/') ? undefined : { external: true }));
  },
};

await build({
  stdin: {
    contents: "exports.Ajv2020 = require('ajv/dist/2020.js');\nexports.standalone = require('ajv/dist/standalone/index.js');\n",
    resolveDir: root,
    sourcefile: 'ajv-bundle.cjs',
    loader: 'js',
  },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  outfile: dist('runtime/ajv-bundle.cjs'),
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});

// CommonJS, so that a code cache can be given with it (Node 20 takes none for an ES module). CommonJS has
// no import.meta: the modules that find files relative to themselves get the bundle's URL.
const commonJs = {
  format: 'cjs',
  // A bundle run from its code cache is a vm.Script, which has no loader for import(): the packages the
  // runtime imports when it needs them (pino and undici, for a served syscall, both CommonJS) are required.
  supported: { 'dynamic-import': false },
  banner: { js: 'const import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
  define: { 'import.meta.url': 'import_meta_url' },
};

/** `entry` (a module of dist/) and the workspace's modules it imports, as one CommonJS file at `outfile`. */
function bundleWorkspace(entry, outfile) {
  return build({
    entryPoints: [dist(entry)],
    bundle: true,
    platform: 'node',
    target: 'node20',
    outfile: dist(outfile),
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: true,
    plugins: [workspaceOnly],
    logLevel: 'warning',
    ...commonJs,
  });
}

await bundleWorkspace('embedded/index.js', 'runtime/embedded-bundle.cjs');
await bundleWorkspace('runtime/worker.js', 'runtime/worker-bundle.cjs');

// A module that finds a file relative to itself would look for it beside the bundle instead: only those
// whose files are in dist/runtime/ may be in it. The manifest's schema (schema.js) is one that is not,
// and the runtime does not use it (@berm/manifest has no side effects, so what is not used is left out).
// The code cache is made here, in a process run with no flags as a command is, so V8 takes it then.
const { writeCodeCache } = await import(dist('runtime/code-cache.js'));
const { compileValidators } = await import(dist('runtime/validators.js'));
const { compileOutputCheck } = await import(dist('mcp/output-check.js'));
await writeCodeCache(dist('runtime/ajv-bundle.cjs'), () => {
  const text = { type: 'string' };
  const validators = compileValidators({
    tools: [
      { name: 'tool', description: '', arguments: { type: 'object', properties: { text, n: { type: 'integer' } }, required: ['text'] } },
    ],
    events: [{ name: 'event', description: '', fields: { type: 'object', properties: { text } } }],
  });
  validators.tool('tool')?.({ text: 'a', n: 1 });
  validators.source();
  compileOutputCheck({ type: 'object', properties: { text } }, 'the result')({ text: 'a' });
});

// What a run does of the embedded runtime short of a call: made, and closed.
await writeCodeCache(dist('runtime/embedded-bundle.cjs'), async ({ EmbeddedRuntime }) => {
  const runtime = await EmbeddedRuntime.open([]);
  await runtime.close();
});

for (const file of ['runtime/embedded-bundle.cjs', 'runtime/worker-bundle.cjs']) {
  const bundled = readFileSync(dist(file), 'utf8');
  if (bundled.includes('manifest.schema.json')) {
    console.error(`bermd: dist/${file} reads manifest.schema.json relative to itself, where it is not`);
    process.exit(1);
  }
  if (bundled.includes('import.meta')) {
    console.error(`bermd: dist/${file} is CommonJS and uses import.meta, which CommonJS has not`);
    process.exit(1);
  }
}
