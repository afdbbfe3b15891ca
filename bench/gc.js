// Benchmark (not a test): what a tools/call leaves to the garbage collector of bermd's main thread. The
// same echo calls as bench/mcp.js, in both protocol generations, to a bermd and to the bare server
// (lib/bare.js) measured in the same run, each with lib/gc-probe.js loaded: per call, the time its
// young-generation collections took, the bytes they moved to the old generation (which a full
// collection must then reclaim), and the share of what a call allocates that survives a collection.
// The ratio is bermd's collection time per call over the bare server's. What a call keeps past its answer
// shows here, long before a profile of its time does (docs/decisions.md, "A call lets go of its request
// when it ends").
// Build first: npm run build. Run: node bench/gc.js (BENCH_CALLS, BENCH_CONCURRENCY, BENCH_ARGS as bench/mcp.js).
import { fileURLToPath } from 'node:url';
import { startBare } from './lib/bare.js';
import { closeAgent, put, session, startBermd } from './lib/daemon.js';
import { ECHO_WAT, image } from './lib/guests.js';
import { MODERN, measure, stateless } from './lib/mcp.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 8000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const EXTRA = (process.env.BENCH_ARGS ?? '').split(' ').filter(Boolean);
const PROBE = fileURLToPath(new URL('./lib/gc-probe.js', import.meta.url));
const probed = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --expose-gc --import ${PROBE}`.trim() };

/** Opens the probe's window in `server`, runs `work`, closes it: what the collector did meanwhile. */
async function window(server, work) {
  const from = server.stderr().length;
  server.child.kill('SIGHUP');
  await work();
  const line = server.waitForLine((l) => l.startsWith('{"gc":'), from);
  server.child.kill('SIGHUP');
  return JSON.parse(await line).gc;
}

const bermd = await startBermd(EXTRA, { env: probed });
await put(`${bermd.url}/harnesses/echo`, image(ECHO_WAT, ['echo']));
const bare = await startBare([], probed);
const generations = [
  { name: '2025-11-25 (session)', make: (url) => session(url) },
  { name: `${MODERN} (stateless)`, make: (url) => stateless(url) },
];
const echo = (c) => c('echo.echo', { text: 'hello' });
const rows = [];
for (const generation of generations) {
  for (const [label, server] of [
    ['bare server', bare],
    ['bermd /mcp', bermd],
  ]) {
    const callers = await Promise.all(Array.from({ length: CONCURRENCY }, () => generation.make(`${server.url}/mcp`)));
    await measure('warm-up', 1000, CONCURRENCY, callers, echo);
    const gc = await window(server, () => measure(label, CALLS, CONCURRENCY, callers, echo));
    rows.push({ generation: generation.name, label, gc });
  }
}
await bermd.stop();
await bare.stop();
closeAgent();

const perCall = (v) => (v / CALLS).toFixed(1).padStart(10);
console.log(
  `${'young-generation collections, per call'.padEnd(44)} ${'time µs'.padStart(10)} ${'promoted B'.padStart(10)} ${'survived'.padStart(9)} ${'full GCs'.padStart(9)}`,
);
for (const { generation, label, gc } of rows) {
  const survived = gc.allocated > 0 ? `${((100 * gc.survived) / gc.allocated).toFixed(1)} %` : '-';
  console.log(
    `${`${generation}: ${label}`.padEnd(44)} ${perCall(gc.scavengeUs)} ${perCall(gc.promoted)} ${survived.padStart(9)} ${String(gc.full).padStart(9)}`,
  );
}
for (const generation of generations) {
  const [bareRow, bermdRow] = rows.filter((r) => r.generation === generation.name);
  const ratio = bareRow.gc.scavengeUs > 0 ? (bermdRow.gc.scavengeUs / bareRow.gc.scavengeUs).toFixed(2) : '-';
  console.log(`${generation.name}: bermd's collection time per call vs the bare server's: ${ratio}x (over ${CALLS} calls each)`);
}
