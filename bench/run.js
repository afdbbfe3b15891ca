#!/usr/bin/env node
// Runs every benchmark in this folder, one after another, each as its own process (`npm run bench`).
//
//   npm run build && node bench/run.js [NAME...]
//
// NAME picks benchmarks by file name (`cli`, `breaks.js`); none means all. Each prints its own
// figures, with ratios against baselines it measures in the same run; this only runs them in
// sequence (never in parallel, which would skew every figure on a 2-core machine), says which
// failed and exits non-zero if any did. Settings go through as environment variables (RUNS,
// BENCH_ROUNDS, ...): see each file's header.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const repo = fileURLToPath(new URL('..', import.meta.url));
const self = basename(fileURLToPath(import.meta.url));

const all = readdirSync(benchDir)
  .filter((f) => f.endsWith('.js') && !f.startsWith('.') && f !== self)
  .sort();

const wanted = process.argv.slice(2).map((name) => (name.endsWith('.js') ? name : `${name}.js`));
const unknown = wanted.filter((name) => !all.includes(name));
if (unknown.length > 0) {
  console.error(`no such benchmark: ${unknown.join(', ')} (there are: ${all.map((f) => f.replace(/\.js$/, '')).join(', ')})`);
  process.exit(2);
}
const chosen = wanted.length > 0 ? all.filter((f) => wanted.includes(f)) : all;

// The benchmarks import the packages' compiled output, which the build writes; checking here
// gives one clear message instead of a module-not-found trace from each of them.
const missing = builtOutputs().filter((file) => !existsSync(file));
if (missing.length > 0) {
  console.error(`not built (missing ${missing.map((f) => f.slice(repo.length)).join(', ')}): run \`npm run build\` first`);
  process.exit(2);
}

const failed = [];
const started = Date.now();
for (const file of chosen) {
  console.log(`\n== bench/${file}: ${summary(join(benchDir, file))}`);
  const t0 = Date.now();
  const { code, signal } = await run(join(benchDir, file));
  const took = `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  if (code === 0) {
    console.log(`-- bench/${file} done in ${took}`);
  } else {
    console.log(`-- bench/${file} FAILED (${signal ?? `exit ${code}`}) after ${took}`);
    failed.push(file);
  }
}
console.log(
  `\n${chosen.length - failed.length} of ${chosen.length} benchmarks ran in ${((Date.now() - started) / 1000).toFixed(0)} s` +
    (failed.length ? `; failed: ${failed.join(', ')}` : ''),
);
process.exitCode = failed.length ? 1 : 0;

/** Runs one benchmark with this terminal as its own, so it prints as it goes. */
function run(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd: repo, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** The first sentence of a benchmark's header comment, which says what it measures. */
function summary(file) {
  const header = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('#!')) continue;
    if (!line.startsWith('//')) break;
    const text = line.slice(2).trim();
    if (text === '') {
      if (header.length) break;
      continue;
    }
    header.push(text);
  }
  const text = header.join(' ');
  const end = text.search(/\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end);
}

/** Each workspace package's entry point and bin targets, as its package.json names them. */
function builtOutputs() {
  const packages = join(repo, 'packages');
  const files = [];
  for (const dir of readdirSync(packages)) {
    const manifest = join(packages, dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const { main } = JSON.parse(readFileSync(manifest, 'utf8'));
    if (main) files.push(join(packages, dir, main));
  }
  // Not a package's entry point, but what reading an image needs; a bare `tsc -b` does not write it.
  files.push(join(packages, 'manifest', 'dist', 'manifest-validator.js'));
  return files;
}
