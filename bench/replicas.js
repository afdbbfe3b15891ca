// Benchmark (not a test) of bermd replicas sharing one PostgreSQL database, on a private server this
// starts and removes (test/helpers/postgres-server.js: Debian's PostgreSQL, run as postgres when root).
//
// 1. Convergence: how long after a deploy through replica A answers, replica B serves the new harness
//    (a tools/call on B, asked again until it answers). Baseline, same run: the deploy's own time, on
//    PostgreSQL and on the directory store. Target: under 1 s.
// 2. tools/call throughput of one replica on the directory store (the baseline), one on PostgreSQL, and
//    two on PostgreSQL together, with the same number of calls in flight. A call writes nothing on its
//    path (uses are batched), so the store should not show here.
// 3. tools/call throughput through Debian's HAProxy in plain round robin in front of the two replicas,
//    2025 sessions with no affinity (each request may reach either replica), against one replica direct
//    on PostgreSQL, same run, as a ratio. Skipped, and said so, when there is no haproxy; the whole run
//    is skipped, and said so, when there is no PostgreSQL.
//
// Build first: npm run build. Run: node bench/replicas.js
// Settings: BENCH_DEPLOYS (30), BENCH_CALLS (3000), BENCH_CONCURRENCY (8), BENCH_ROUNDS (3).
import { postgresBinDir, startPostgres } from '../test/helpers/postgres-server.js';
import { ECHO_WAT, image } from './lib/guests.js';
import { haproxyPath, startHaproxy } from './lib/haproxy.js';
import { closeAgent, put, quantile, session, startBermd } from './lib/daemon.js';
import { measure, ROUNDS, repeat } from './lib/mcp.js';

const DEPLOYS = Number(process.env.BENCH_DEPLOYS ?? 30);
const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ARGS = { text: 'hello' };
const echoImage = image(ECHO_WAT, ['echo']);

const stats = (values) => {
  const sorted = [...values].sort((x, y) => x - y);
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), max: sorted.at(-1) };
};

/** Asks `ask` to call `tool` until it answers: a name the replica does not serve yet is refused at once. */
async function untilServed(ask, tool) {
  for (;;) {
    try {
      return await ask(tool, ARGS);
    } catch {}
  }
}

/** Deploys a new name through `through` DEPLOYS times; per deploy, its own time and (with `servedBy`) how long after its answer `servedBy` serves it. */
async function deploys(through, servedBy, prefix) {
  const ask = servedBy === undefined ? undefined : await session(`${servedBy.url}/mcp`);
  const own = [];
  const served = [];
  for (let i = 0; i < DEPLOYS; i++) {
    const name = `${prefix}${i}`;
    const t0 = performance.now();
    await put(`${through.url}/harnesses/${name}`, echoImage);
    const answered = performance.now();
    own.push(answered - t0);
    if (ask === undefined) continue;
    // Unknown until B has it: the refusal is answered at once, so asking again costs about a millisecond.
    await untilServed(ask, `${name}.echo`);
    served.push(performance.now() - answered);
  }
  return { own: stats(own), served: served.length > 0 ? stats(served) : undefined };
}

/** `replicas` (or a balancer in front of them): each in-flight caller opens its session on the next one. */
async function throughput(label, replicas) {
  const callers = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => session(`${replicas[i % replicas.length].url}/mcp`)));
  await measure('warm-up', 500, CONCURRENCY, callers, (c) => c('echo.echo', ARGS));
  return repeat(() => measure(label, CALLS, CONCURRENCY, callers, (c) => c('echo.echo', ARGS)));
}

if (postgresBinDir() === undefined) {
  console.log('skipped: no PostgreSQL on this machine (no initdb under /usr/lib/postgresql/*/bin or on PATH; set BERM_POSTGRES_BIN)');
  process.exit(0);
}
const HAPROXY = haproxyPath();
const pg = await startPostgres();
const started = [];
let balancer;
const bermd = async (options) => {
  const d = await startBermd([], options);
  started.push(d);
  return d;
};
try {
  const dir = await bermd();
  const a = await bermd({ store: pg.url });
  const b = await bermd({ store: pg.url });

  const onDirectory = await deploys(dir, undefined, 'd');
  const acrossReplicas = await deploys(a, b, 'r');

  await put(`${dir.url}/harnesses/echo`, echoImage);
  await put(`${a.url}/harnesses/echo`, echoImage);
  // B serves echo once it has followed A's deploy: the first answer says so.
  const onB = await session(`${b.url}/mcp`);
  await untilServed(onB, 'echo.echo');
  const rows = [
    await throughput('one replica, directory store', [dir]),
    await throughput('one replica, PostgreSQL', [a]),
    await throughput('two replicas, PostgreSQL', [a, b]),
  ];
  if (HAPROXY !== null) {
    balancer = await startHaproxy(
      HAPROXY,
      [a, b].map((d) => Number(new URL(d.url).port)),
    );
    rows.push(await throughput('two replicas behind HAProxy, round robin', [balancer]));
  }

  const ms = (v) => `${v.toFixed(1)} ms`.padStart(10);
  console.log(`node ${process.version}, ${DEPLOYS} deploys; best of ${ROUNDS} rounds of ${CALLS} calls, ${CONCURRENCY} in flight\n`);
  console.log(`${'measured'.padEnd(52)} ${'p50'.padStart(10)} ${'p95'.padStart(10)} ${'max'.padStart(10)}`);
  const line = (label, s) => console.log(`${label.padEnd(52)} ${ms(s.p50)} ${ms(s.p95)} ${ms(s.max)}`);
  line('deploy answered, directory store', onDirectory.own);
  line('deploy answered, PostgreSQL (through A)', acrossReplicas.own);
  line("from A's answer to B serving it", acrossReplicas.served);
  console.log('');
  console.log(`${'measured'.padEnd(52)} ${'calls/s'.padStart(10)} ${'p50'.padStart(10)} ${'p99'.padStart(10)}`);
  for (const r of rows) console.log(`${r.label.padEnd(52)} ${r.perSecond.toFixed(0).padStart(10)} ${ms(r.p50)} ${ms(r.p99)}`);
  console.log('');
  console.log(
    `deploy to serving on another replica, p50:  ${acrossReplicas.served.p50.toFixed(1)} ms, ${(acrossReplicas.served.p50 / acrossReplicas.own.p50).toFixed(2)}x the deploy itself (target < 1000 ms; max ${acrossReplicas.served.max.toFixed(1)} ms)`,
  );
  console.log(`PostgreSQL / directory deploy time, p50:    ${(acrossReplicas.own.p50 / onDirectory.own.p50).toFixed(2)}`);
  console.log(`PostgreSQL / directory throughput, 1 replica: ${(rows[1].perSecond / rows[0].perSecond).toFixed(2)}`);
  console.log(`two replicas / one on directory throughput:   ${(rows[2].perSecond / rows[0].perSecond).toFixed(2)}`);
  if (rows[3] === undefined) console.log('behind HAProxy: skipped, no haproxy on this machine');
  else console.log(`behind HAProxy (round robin) / one replica direct, PostgreSQL: ${(rows[3].perSecond / rows[1].perSecond).toFixed(2)}`);
} finally {
  await balancer?.stop();
  for (const d of started) await d.stop();
  await pg.remove();
  closeAgent();
}
