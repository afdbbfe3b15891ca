#!/usr/bin/env node
// Start-up cost of the command line: `crab inspect --json <example image>` against `node -e 0`,
// each the median of RUNS runs, interleaved so that load on the machine hits both alike.
// A benchmark, not a test: it prints figures and a ratio (target: at most 2.5x) and asserts nothing.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.env.RUNS ?? 15);
const repo = fileURLToPath(new URL('..', import.meta.url));
const image = 'examples/echo.wasm';

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

const crabArgs = ['bin/crab', 'inspect', '--json', image];
// One untimed run of each warms the filesystem cache.
time(['-e', '0']);
time(crabArgs);
const baseline = [];
const crab = [];
for (let i = 0; i < RUNS; i++) {
  baseline.push(time(['-e', '0']));
  crab.push(time(crabArgs));
}
const b = median(baseline);
const c = median(crab);
console.log(`node -e 0                      median ${b.toFixed(1)} ms over ${RUNS} runs`);
console.log(`crab inspect --json ${image}  median ${c.toFixed(1)} ms over ${RUNS} runs`);
console.log(`ratio ${(c / b).toFixed(2)}x (target <= 2.5x)`);
