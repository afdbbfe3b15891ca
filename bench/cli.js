#!/usr/bin/env node
// Start-up cost of the command line: `crab inspect --json <example image>` against `node -e 0`,
// each the median of RUNS runs, interleaved so that load on the machine hits all alike.
// Two more rows say where the time goes: the same read done by a bare script calling
// @berm/manifest (the floor the CLI cannot go below), and the command taken through oclif
// (`--` keeps it off the fast path in bin/run.js).
// A benchmark, not a test: it prints figures and ratios (target: at most 2.5x) and asserts nothing.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.env.RUNS ?? 15);
const repo = fileURLToPath(new URL('..', import.meta.url));
const image = 'examples/echo.wasm';

const libraryOnly = `
const { readManifestFile } = await import('@berm/manifest');
process.stdout.write(JSON.stringify((await readManifestFile(${JSON.stringify(image)})).toJSON(), null, 2) + '\\n');
`;

const rows = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: '@berm/manifest read alone', args: ['--input-type=module', '-e', libraryOnly] },
  { name: `crab inspect --json ${image}`, args: ['bin/crab', 'inspect', '--json', image] },
  { name: '  the same through oclif', args: ['bin/crab', 'inspect', '--json', '--', image] },
];

function time(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// One untimed run of each warms the filesystem cache.
for (const row of rows) time(row.args);
const samples = rows.map(() => []);
for (let i = 0; i < RUNS; i++) rows.forEach((row, r) => samples[r].push(time(row.args)));

const medians = samples.map(median);
const width = Math.max(...rows.map((row) => row.name.length));
rows.forEach((row, r) => {
  const ratio = r === 0 ? '' : `  ${(medians[r] / medians[0]).toFixed(2)}x`;
  console.log(`${row.name.padEnd(width)}  median ${medians[r].toFixed(1).padStart(6)} ms${ratio}`);
});
console.log(`over ${RUNS} runs each; target for crab inspect --json: at most 2.5x node -e 0`);
