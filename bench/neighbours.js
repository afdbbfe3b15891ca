// Benchmark of fair sharing (not a test): a well-behaved harness's calls while another harness keeps 4
// runaway calls in flight at a 2 s limit, against the same calls on the same daemon with nothing else
// running, measured in the same run. Build first: npm run build. Run: node bench/neighbours.js
//
//   BENCH_CALLS        calls of the well-behaved harness per phase (default 2000)
//   BENCH_CONCURRENCY  of them in flight at once (default 1)
//   BENCH_ARGS         extra bermd flags, e.g. "--max-concurrency 4" to see a limit that lets one harness hold the CPU
//
// The runaway calls are raw tools/call POSTs to a guest that loops forever; each ends at its 2 s limit
// (or, waiting behind the runaway harness's own limit, never runs and times out waiting), and a new one
// replaces it, so 4 are always in flight. Target: p99 under load at most 10x the idle p99.
import { ECHO_WAT, RUNAWAY_WAT, image } from './lib/guests.js';
import { agent, put, quantile, session, startBermd } from './lib/daemon.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const EXTRA = (process.env.BENCH_ARGS ?? '').split(' ').filter(Boolean);
const RUNAWAYS = 4;
const TARGET = 10;

const bermd = await startBermd(['--call-timeout', '2s', ...EXTRA]);
await put(`${bermd.url}/harnesses/good`, image(ECHO_WAT, ['echo']));
await put(`${bermd.url}/harnesses/runaway`, image(RUNAWAY_WAT, ['echo', 'spin', 'grow']));
const mcp = `${bermd.url}/mcp`;
const good = await Promise.all(Array.from({ length: CONCURRENCY }, () => session(mcp)));
const ARGS = { text: 'hello' };

async function phase(label) {
  const latencies = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    good.map(async (call) => {
      while (next++ < CALLS) {
        const t = performance.now();
        await call('good.echo', ARGS);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { label, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1), perSecond: CALLS / seconds };
}

// Warm the daemon, the worker pool and the sockets, then the idle phase.
await phase('warm-up');
const idle = await phase('idle daemon');

// Four runaway calls in flight from here on, each replaced as it ends.
let running = true;
const outcomes = new Map();
const runaway = await session(mcp, { errors: true });
const loops = Array.from({ length: RUNAWAYS }, async () => {
  while (running) {
    const result = await runaway('runaway.spin', {});
    const code = result._meta?.['berm/error']?.code ?? 'ok';
    const key = code === 'timeout' && /never ran/.test(result.content[0].text) ? 'timeout while waiting' : code;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
});
// Let the first runaway calls take their workers before measuring beside them.
await new Promise((resolve) => setTimeout(resolve, 300));
const loaded = await phase(`beside ${RUNAWAYS} runaway calls`);
running = false;
await Promise.all(loops);

const ms = (v) => `${v.toFixed(2)} ms`.padStart(11);
console.log(
  `node ${process.version}, ${CALLS} calls of a trivial tool per phase, ${CONCURRENCY} in flight, raw tools/call POSTs; bermd --call-timeout 2s ${EXTRA.join(' ')}\n`,
);
console.log(`${'phase'.padEnd(32)} ${'p50'.padStart(11)} ${'p99'.padStart(11)} ${'max'.padStart(11)} ${'calls/s'.padStart(9)}`);
for (const r of [idle, loaded])
  console.log(`${r.label.padEnd(32)} ${ms(r.p50)} ${ms(r.p99)} ${ms(r.max)} ${r.perSecond.toFixed(0).padStart(9)}`);
console.log('');
console.log(`runaway calls ended: ${[...outcomes].map(([k, n]) => `${n} ${k}`).join(', ')}`);
const ratio = loaded.p99 / idle.p99;
console.log(`p99 beside the runaways / idle p99: ${ratio.toFixed(2)}x (target <= ${TARGET}x)${ratio <= TARGET ? '' : '  MISSED'}`);
await bermd.stop();
agent.destroy();
