// Soak benchmark of what bermd holds (not a test): several clients run a bounded mix of good and hostile
// calls with session churn for a bounded time, and bermd's RSS, heap and open handles are read at the
// start, after a warm-up and at the end; then 5,000 `initialize`s with no session ever ended, against
// the default session cap and against a daemon whose cap is out of reach, in the same run, twice over.
// Build first: npm run build. Run: node bench/soak.js
//
//   SOAK_SECONDS   length of the measured mix (default 60), after WARMUP_SECONDS of the same (default 10)
//   SOAK_CLIENTS   clients running the mix at once (default 6)
//   FLOOD          initialize requests in the flood (default 5000)
//   SETTLE_SECONDS how long bermd is left idle after a flood before it is read again (default 30)
//
// What bermd holds is read from inside it by bench/lib/probe.js (loaded with --import, after a full
// garbage collection): RSS, V8 heap used (the main thread's), active handles (sockets, timers, ...), file
// descriptors and threads (RSS holds each worker thread's own heap, and the pool grows and shrinks).
// Targets: nothing grows from the end of the warm-up to the end of the mix beyond noise (read four times
// along it); the flood's RSS growth is bounded by the session cap (a second flood adds nothing), where
// the uncapped daemon's grows with every session. Right after a flood RSS holds the garbage of every
// session closed to make room, which V8 gives back once the daemon idles: each flood is read right
// after and again SETTLE_SECONDS later.
import { ECHO_WAT, RUNAWAY_WAT, image } from './lib/guests.js';
import { agent, del, initialize, put, session, startBermd } from './lib/daemon.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const WARMUP = Number(process.env.WARMUP_SECONDS ?? 10);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 6);
const FLOOD = Number(process.env.FLOOD ?? 5000);
const SETTLE = Number(process.env.SETTLE_SECONDS ?? 30);
const FLOOD_CONCURRENCY = 32;
const DAEMON = ['--call-timeout', '2s', '--max-memory', '16M'];

const echo = image(ECHO_WAT, ['echo']);
const runaway = image(RUNAWAY_WAT, ['echo', 'spin', 'grow']);

async function daemon(args = []) {
  const d = await startBermd([...DAEMON, ...args], { probe: true });
  await put(`${d.url}/harnesses/good`, echo);
  await put(`${d.url}/harnesses/runaway`, runaway);
  return d;
}

/** What each kind of call in the mix is expected to end with: ok, or one of these error codes. */
const EXPECTED = { good: ['ok'], churn: ['ok'], spin: ['timeout', 'busy'], grow: ['trap', 'timeout', 'busy'] };

/**
 * One client's mix until `until`: 80% trivial calls on its session, 8% a session started, used and ended,
 * 6% a call that loops until its time limit, 6% one that takes memory until refused and traps. Each
 * outcome is counted; one a kind of call should not end with is counted apart, as unexpected.
 */
async function client(url, until, counts) {
  const mcp = `${url}/mcp`;
  const call = await session(mcp, { errors: true });
  const outcome = (r) => r._meta?.['berm/error']?.code ?? (r.isError ? 'error' : 'ok');
  while (performance.now() < until) {
    const roll = Math.random();
    let kind;
    let code;
    if (roll < 0.8) {
      kind = 'good';
      code = outcome(await call('good.echo', { text: 'soak' }));
    } else if (roll < 0.88) {
      kind = 'churn';
      const other = await session(mcp, { errors: true });
      code = outcome(await other('good.echo', { text: 'short-lived' }));
      const ended = await del(mcp, other.headers);
      if (ended !== 200) throw new Error(`DELETE /mcp answered ${ended}`);
    } else if (roll < 0.94) {
      kind = 'spin';
      code = outcome(await call('runaway.spin', {}));
    } else {
      kind = 'grow';
      code = outcome(await call('runaway.grow', {}));
    }
    const key = EXPECTED[kind].includes(code) ? kind : `unexpected ${kind} ${code}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
}

async function mix(url, seconds) {
  const counts = {};
  const until = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: CLIENTS }, () => client(url, until, counts)));
  return counts;
}

/** `FLOOD` initialize requests, then what the daemon holds right after and once it has idled. */
async function flood(d) {
  await initializeMany(d.url);
  const after = await d.probe();
  await new Promise((resolve) => setTimeout(resolve, SETTLE * 1000));
  return { after, settled: await d.probe() };
}

async function initializeMany(url) {
  let next = 0;
  await Promise.all(
    Array.from({ length: FLOOD_CONCURRENCY }, async () => {
      while (next++ < FLOOD) {
        const { id } = await initialize(`${url}/mcp`);
        if (id === undefined) throw new Error('initialize answered without a session id');
      }
    }),
  );
}

const MB = 1024 * 1024;
const row = (label, p) =>
  `${label.padEnd(34)} ${(p.rss / MB).toFixed(1).padStart(8)} ${(p.heapUsed / MB).toFixed(1).padStart(8)} ${String(p.handles).padStart(8)} ${String(p.fds).padStart(6)} ${String(p.threads).padStart(8)}`;
const header = `${'moment'.padEnd(34)} ${'RSS MB'.padStart(8)} ${'heap MB'.padStart(8)} ${'handles'.padStart(8)} ${'fds'.padStart(6)} ${'threads'.padStart(8)}`;

// 1. The mix.
const d = await daemon();
const start = await d.probe();
const warm = await mix(d.url, WARMUP);
const afterWarmUp = await d.probe();
const along = [];
const counts = {};
for (let quarter = 1; quarter <= 4; quarter++) {
  for (const [kind, n] of Object.entries(await mix(d.url, SECONDS / 4))) counts[kind] = (counts[kind] ?? 0) + n;
  along.push({ label: `after ${(SECONDS * quarter) / 4} s more of the mix`, probe: await d.probe() });
}
const end = along.at(-1).probe;
// 2. The flood, twice, on the same daemon (default cap).
const capped = [await flood(d), await flood(d)];
await d.stop();

// 3. The same floods on a daemon whose cap they never reach: what each session costs when nothing bounds them.
const open = await daemon(['--max-sessions', String(FLOOD * 4)]);
await mix(open.url, 2);
const openBefore = await open.probe();
const uncapped = [await flood(open), await flood(open)];
await open.stop();
agent.destroy();

console.log(
  `node ${process.version}; bermd ${DAEMON.join(' ')}; ${CLIENTS} clients, ${WARMUP} s warm-up then ${SECONDS} s of the mix; flood of ${FLOOD} initialize, ${FLOOD_CONCURRENCY} at once\n`,
);
console.log(
  `mix: ${Object.entries(counts)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ')} (warm-up: ${Object.values(warm).reduce((a, b) => a + b, 0)} calls)\n`,
);
console.log(header);
console.log(row('start', start));
console.log(row(`after ${WARMUP} s warm-up`, afterWarmUp));
for (const { label, probe } of along) console.log(row(label, probe));
const floods = (label, [first, second]) => {
  console.log(row(`${label}after ${FLOOD} initialize`, first.after));
  console.log(row(`${label}  ${SETTLE} s later`, first.settled));
  console.log(row(`${label}after ${FLOOD} more`, second.after));
  console.log(row(`${label}  ${SETTLE} s later`, second.settled));
};
floods('cap 1000: ', capped);
console.log(row('uncapped daemon, before the flood', openBefore));
floods('uncapped: ', uncapped);
console.log('');
const grew = (a, b, key) => ((b[key] - a[key]) / MB).toFixed(1);
console.log(
  `from warm-up to end: RSS ${grew(afterWarmUp, end, 'rss')} MB, heap ${grew(afterWarmUp, end, 'heapUsed')} MB, handles ${end.handles - afterWarmUp.handles}, fds ${end.fds - afterWarmUp.fds} (target: no growth)`,
);
const perSession = (uncapped[0].settled.rss - openBefore.rss) / FLOOD;
console.log(
  `settled after each flood of ${FLOOD}: with the cap of 1000, RSS +${grew(end, capped[0].settled, 'rss')} MB then +${grew(capped[0].settled, capped[1].settled, 'rss')} MB ` +
    `(heap +${grew(end, capped[0].settled, 'heapUsed')} then +${grew(capped[0].settled, capped[1].settled, 'heapUsed')}); uncapped, ` +
    `+${grew(openBefore, uncapped[0].settled, 'rss')} MB then +${grew(uncapped[0].settled, uncapped[1].settled, 'rss')} MB ` +
    `(${(perSession / 1024).toFixed(1)} KB of RSS a session; 1000 of them: ${((perSession * 1000) / MB).toFixed(0)} MB)`,
);
