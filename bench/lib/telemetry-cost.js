// What bermd's telemetry costs a tools/call, for bench/mcp.js (which prints it last) and on its own
// (`node bench/lib/telemetry-cost.js`, for a quick look): the same fast-path calls, in both protocol
// generations, to bermds alike but for telemetry, measured round by round in turn:
// - off: OTEL_SDK_DISABLED=true, nothing recorded (the baseline);
// - metrics: the default, every metric recorded and read by /metrics;
// - tracing: metrics and every call's spans, fully sampled, exported over OTLP/HTTP to a receiver in a
//   process of its own that counts what it is sent and drops it.
// Each configuration runs in several bermds (BENCH_PROCESSES, 3 by default): two processes of the same
// build and settings differ in throughput by as much as telemetry's cost (docs/decisions.md, "What telemetry
// costs a call, measured in several processes"), so a configuration's figure is its median process's, each
// process taken at its best round. A run whose receiver got no spans fails rather than report a tracing
// cost that measured nothing.
import { fileURLToPath } from 'node:url';
import { ECHO_WAT, image } from './guests.js';
import { closeAgent, put, session, startBermd, startServer } from './daemon.js';
import { MODERN, measure, repeatEach, stateless } from './mcp.js';

const RECEIVER = `
import { createServer } from 'node:http';
let requests = 0, bytes = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET') { res.end(JSON.stringify({ requests, bytes })); return; }
  req.on('data', (c) => { bytes += c.length; });
  req.on('end', () => { requests++; res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' }).end(); });
});
server.listen(0, '127.0.0.1', () => console.log('receiver listening on http://127.0.0.1:' + server.address().port + ' '));
`;

/** The environment without any OpenTelemetry variable of the caller's, so each bermd is configured only as said here. */
function cleanEnv(extra = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  return { ...env, ...extra };
}

/** How many bermds run each configuration. */
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 3);

/** Measures the three configurations; returns the rows (each configuration's median process) and the ratios against `off`, by generation. */
export async function telemetryCost({ calls, concurrency, extraArgs = [], processes = PROCESSES }) {
  const receiver = await startServer(['--input-type=module', '-e', RECEIVER], /receiver listening on (http:\/\/\S+) /);
  const configs = {
    off: { label: 'telemetry off (OTEL_SDK_DISABLED=true)', env: cleanEnv({ OTEL_SDK_DISABLED: 'true' }), args: [] },
    metrics: { label: 'metrics on (the default)', env: cleanEnv(), args: [] },
    tracing: {
      label: 'metrics and tracing, every call sampled',
      env: cleanEnv({ OTEL_BSP_MAX_QUEUE_SIZE: '65536' }),
      args: ['--otel-exporter-otlp-endpoint', receiver.url, '--otel-traces-sampler', 'always_on'],
    },
  };
  const echoImage = image(ECHO_WAT, ['echo']);
  const generations = {
    session: { name: '2025-11-25 (session)', make: (url) => session(url) },
    stateless: { name: `${MODERN} (stateless)`, make: (url) => stateless(url) },
  };
  const echo = (c) => c('echo.echo', { text: 'hello' });
  for (const config of Object.values(configs)) {
    config.bermds = [];
    for (let p = 0; p < processes; p++) {
      const bermd = await startBermd([...extraArgs, ...config.args], { env: config.env });
      await put(`${bermd.url}/harnesses/echo`, echoImage);
      bermd.callers = {};
      for (const [key, g] of Object.entries(generations)) {
        bermd.callers[key] = await Promise.all(Array.from({ length: concurrency }, () => g.make(`${bermd.url}/mcp`)));
        await measure('warm-up', 500, concurrency, bermd.callers[key], echo);
      }
      config.bermds.push(bermd);
    }
  }
  // The configurations side by side within each round: a slow spell of the machine falls on all three alike.
  const best = await repeatEach(
    Array.from({ length: processes }, (_, p) => p).flatMap((p) =>
      Object.entries(generations).flatMap(([gen, g]) =>
        Object.entries(configs).map(([key, config]) => [
          `${key} ${gen} ${p}`,
          () =>
            measure(
              `${g.name}: ${config.label}, ${concurrency} in flight`,
              calls,
              concurrency,
              config.bermds[p].callers[gen],
              echo,
              config.bermds[p].pid,
            ),
        ]),
      ),
    ),
  );
  for (const config of Object.values(configs)) for (const bermd of config.bermds) await bermd.stop();
  const received = await fetch(receiver.url).then((r) => r.json());
  await receiver.stop();
  if (received.requests === 0) throw new Error('the OTLP receiver got no export: tracing was not on, its cost not measured');
  // Each configuration's median process, by its best round; with it, every process's best throughput.
  const median = {};
  for (const key of Object.keys(configs)) {
    for (const gen of Object.keys(generations)) {
      const bests = Array.from({ length: processes }, (_, p) => best[`${key} ${gen} ${p}`]).sort((a, b) => a.perSecond - b.perSecond);
      median[`${key} ${gen}`] = { ...bests[Math.floor((bests.length - 1) / 2)], processes: bests.map((b) => b.perSecond) };
    }
  }
  const ratios = Object.fromEntries(
    Object.keys(generations).map((gen) => [
      gen,
      {
        metrics: median[`metrics ${gen}`].perSecond / median[`off ${gen}`].perSecond,
        tracing: median[`tracing ${gen}`].perSecond / median[`off ${gen}`].perSecond,
      },
    ]),
  );
  return { rows: Object.values(median), ratios, generations, received, processes };
}

/** Prints what `telemetryCost` measured. */
export function printTelemetryCost({ rows, ratios, generations, received, processes }) {
  const ms = (v) => `${v.toFixed(3)} ms`.padStart(10);
  const cpu = (m) => (m.cpu && m.cpu.all > 0 ? `${m.cpu.all.toFixed(0)} µs (main thread ${m.cpu.main.toFixed(0)} µs)` : '');
  console.log(
    `${`telemetry (the median of ${processes} bermds each, at its best round)`.padEnd(72)} ${'calls/s'.padStart(9)} ${'p50'.padStart(10)} ${'p99'.padStart(10)}  server CPU per call; every bermd's calls/s`,
  );
  for (const r of rows)
    console.log(
      `${r.label.padEnd(72)} ${r.perSecond.toFixed(0).padStart(9)} ${ms(r.p50)} ${ms(r.p99)}  ${cpu(r)}; ${r.processes.map((v) => v.toFixed(0)).join(', ')}`,
    );
  for (const [gen, r] of Object.entries(ratios)) {
    console.log(
      `${generations[gen].name}: throughput vs telemetry off: metrics ${r.metrics.toFixed(2)}x (target >= 0.95), tracing fully sampled ${r.tracing.toFixed(2)}x (target >= 0.85)`,
    );
  }
  console.log(`the receiver got ${received.requests} OTLP exports, ${(received.bytes / 1e6).toFixed(1)} MB`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  printTelemetryCost(
    await telemetryCost({
      calls: Number(process.env.BENCH_CALLS ?? 3000),
      concurrency: Number(process.env.BENCH_CONCURRENCY ?? 8),
      extraArgs: (process.env.BENCH_ARGS ?? '').split(' ').filter(Boolean),
    }),
  );
  closeAgent();
}
