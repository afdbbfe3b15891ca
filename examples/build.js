#!/usr/bin/env node
// Regenerates each WAT example image from its readable sources: <name>/<name>.wat compiled by wabt,
// with <name>/manifest.json written into its .berm.abi section. (The AssemblyScript examples,
// weather, geo and conformance, are built by `crab build`, or by buildGuestExample below, and not
// committed.) The images are committed so that
// `crab inspect examples/echo.wasm` works right after install; a test checks they match their sources.
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import wabtInit from 'wabt';
import { writeManifestSection } from '@berm/manifest';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function buildExample(name) {
  const wabt = await wabtInit();
  const wat = await readFile(path.join(here, name, `${name}.wat`), 'utf8');
  const manifest = JSON.parse(await readFile(path.join(here, name, 'manifest.json'), 'utf8'));
  const module = wabt.parseWat(`${name}.wat`, wat, { bulk_memory: true });
  try {
    module.resolveNames();
    module.validate();
    return writeManifestSection(Uint8Array.from(module.toBinary({}).buffer), manifest);
  } finally {
    module.destroy();
  }
}

/**
 * Builds the AssemblyScript example `name` (examples/<name>, a @berm/guest project) as `crab build` does,
 * and answers its image's bytes; nothing is written. The guest toolchain is loaded only here: the WAT
 * examples above need none of it.
 */
export async function buildGuestExample(name) {
  const { build } = await import('@berm/guest/build');
  return (await build({ dir: path.join(here, name) })).bytes;
}

export async function exampleNames() {
  const entries = await readdir(here, { withFileTypes: true });
  const dirs = entries.filter((e) => e.isDirectory()).map((e) => e.name);
  const wat = await Promise.all(dirs.map((name) => readdir(path.join(here, name)).then((files) => files.includes(`${name}.wat`))));
  return dirs.filter((_, i) => wat[i]).sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const name of await exampleNames()) {
    const out = path.join(here, `${name}.wasm`);
    await writeFile(out, await buildExample(name));
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
  }
}
