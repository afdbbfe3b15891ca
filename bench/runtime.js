// Benchmark of the tool runtime (not a test): what one call costs through ToolRunner, against baselines
// measured in the same run. Build first: npx tsc -b packages/bermd. Run: node bench/runtime.js
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stop, ToolRunner } from '../packages/bermd/dist/runtime/index.js';
import { WorkerPool } from '../packages/bermd/dist/runtime/pool.js';
import { CHAIN_WAT, ECHO_WAT, manifest, wat2wasm } from './lib/guests.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
const CONCURRENCY = 32;

const ARGS = { text: 'hello' };
const ARGS_JSON = JSON.stringify(ARGS);

/** Per-call work of the runtime, done inline on the main thread: the floor a worker can only add to. */
function directCall(module) {
  const instance = new WebAssembly.Instance(module, {});
  const { memory, berm_alloc: alloc, berm_tool_echo: echo } = instance.exports;
  const bytes = new TextEncoder().encode(ARGS_JSON);
  const ptr = alloc(bytes.length);
  new Uint8Array(memory.buffer).set(bytes, ptr);
  const packed = echo(ptr, bytes.length);
  const at = Number(packed >> 32n);
  const len = Number(packed & 0xffffffffn);
  return JSON.parse(new TextDecoder().decode(new Uint8Array(memory.buffer, at, len))).ok;
}

async function measure(label, calls, concurrency, once) {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < calls) await once();
    }),
  );
  const ms = performance.now() - start;
  return { label, perCallUs: (ms * 1000) / calls, perSecond: calls / (ms / 1000) };
}

function best(results) {
  return results.reduce((a, b) => (b.perCallUs < a.perCallUs ? b : a));
}

async function repeat(fn) {
  const results = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await fn());
  return best(results);
}

const echoModule = await WebAssembly.compile(wat2wasm(ECHO_WAT));
const chainBytes = wat2wasm(CHAIN_WAT);

// Baseline 1: instantiate + call on the main thread, no worker.
const direct = await repeat(() => measure('main thread: instantiate + call (baseline)', CALLS * 4, 1, async () => directCall(echoModule)));

// Baseline 2: a round trip through the runner's worker pool doing nothing, and one carrying a compiled
// module (the runner's design), as many in flight as the pool has workers.
const dir = await mkdtemp(join(tmpdir(), 'berm-bench-'));
const workerFile = join(dir, 'noop.mjs');
await writeFile(
  workerFile,
  `import { serveTasks } from ${JSON.stringify(new URL('../packages/bermd/dist/runtime/pool.js', import.meta.url).href)};
const cache = new Map();
serveTasks((t) => { if (t.module) cache.set(t.key, t.module); return cache.size; });
`,
);
const pool = new WorkerPool({ filename: workerFile, min: 2, max: 2, idleTimeoutMs: 30_000, onMessage: () => {} });
const emptyTrip = await repeat(() => measure('pool round trip, digest only', CALLS, 2, () => pool.run({ key: 1 }, new Stop())));
const moduleTrip = await repeat(() =>
  measure('pool round trip, module attached', CALLS, 2, () => pool.run({ key: 1, module: echoModule }, new Stop())),
);
await pool.destroy();
await rm(dir, { recursive: true, force: true });

// The runner: one call in flight (latency) and many (throughput).
const runner = new ToolRunner({ threads: 2 });
runner.setHarness('echo', { module: await runner.compile(wat2wasm(ECHO_WAT)), manifest: manifest(['echo']), digest: 'sha256:echo' });
const check = await runner.call('echo', 'echo', ARGS);
if (!('ok' in check) || check.ok.text !== 'hello') throw new Error(`the runner answered ${JSON.stringify(check)}`);
const serial = await repeat(() => measure('runner: trivial tool, 1 in flight', CALLS / 2, 1, () => runner.call('echo', 'echo', ARGS)));
const parallel = await repeat(() =>
  measure(`runner: trivial tool, ${CONCURRENCY} in flight`, CALLS, CONCURRENCY, () => runner.call('echo', 'echo', ARGS)),
);
await runner.close();

// berm.call: the same chain at depth limits 0..4; the slope is the cost of one nested level.
const levels = [];
for (const depth of [0, 1, 2, 4]) {
  const chained = new ToolRunner({ threads: 2, maxCallDepth: depth });
  chained.setHarness('chain', { module: await chained.compile(chainBytes), manifest: manifest(['chain']), digest: 'sha256:chain' });
  const probe = await chained.call('chain', 'chain', { program: 'chain' });
  if (!('ok' in probe)) throw new Error(`the chain answered ${JSON.stringify(probe)}`);
  levels.push({
    depth,
    ...(await repeat(() =>
      measure(`runner: chain, ${depth} nested levels`, CALLS / 2, CONCURRENCY, () => chained.call('chain', 'chain', { program: 'chain' })),
    )),
  });
  await chained.close();
}
const perLevelUs = (levels.at(-1).perCallUs - levels[0].perCallUs) / levels.at(-1).depth;

const row = (r) => `${r.label.padEnd(48)} ${r.perCallUs.toFixed(1).padStart(8)} µs/call ${r.perSecond.toFixed(0).padStart(8)} calls/s`;
console.log(`node ${process.version}, best of ${ROUNDS} rounds, 2 worker threads\n`);
for (const r of [direct, emptyTrip, moduleTrip, serial, parallel, ...levels]) console.log(row(r));
console.log('');
console.log(`module attached / digest only (pool trip):        ${(moduleTrip.perCallUs / emptyTrip.perCallUs).toFixed(2)}x`);
console.log(`runner, 1 in flight / main-thread baseline:       ${(serial.perCallUs / direct.perCallUs).toFixed(2)}x`);
console.log(`runner, ${CONCURRENCY} in flight / main-thread baseline:      ${(parallel.perCallUs / direct.perCallUs).toFixed(2)}x`);
console.log(`runner, ${CONCURRENCY} in flight / bare pool round trip:       ${(parallel.perCallUs / emptyTrip.perCallUs).toFixed(2)}x`);
console.log(
  `one berm.call level:                              ${perLevelUs.toFixed(1)} µs (${(perLevelUs / direct.perCallUs).toFixed(2)}x the main-thread instantiate + call)`,
);
