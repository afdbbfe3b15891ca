// What telemetry does on bermd's main thread for one fast-path tools/call, measured alone, as a CPU time
// per call that a loaded machine disturbs far less than the throughput of a whole bermd
// (`node bench/lib/telemetry-work.js`; telemetry-cost.js measures the whole bermd). Each call here does
// what telemetry/ does for a call on the fast path, with the same objects: the request's SERVER span,
// handing the call its context (tracing), the call's queue, run and instance spans, the metrics' records,
// the answer handed to the span and written; against the same loop with none of it (off). Tracing exports
// over OTLP/HTTP protobuf to a receiver in a process of its own; the loop lets the event loop turn every
// 64 calls, as a server's does, so the batch processor's exports go out. The CPU counted is the main
// thread's alone (on Linux), which is what every request waits on.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Telemetry, Tracing, traceConfig } from '../../packages/bermd/dist/telemetry/index.js';
import { cpuUs } from './daemon.js';
import { ENVELOPE, MODERN, ROUNDS } from './mcp.js';

const RECEIVER = `
import { createServer } from 'node:http';
const server = createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200, { 'content-type': req.headers['content-type'] }).end()); });
server.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + server.address().port));
`;

const SOURCES = {
  workersBusy: () => 0,
  queueDepths: () => new Map(),
  sessions: () => 0,
  streams: () => ({ session: 0, listen: 0 }),
  store: () => ({ kind: 'directory', reachable: true }),
};

/** A response as the span sees it: written once, then finished. */
class Response extends EventEmitter {
  statusCode = 200;
  headers = {};
  getHeader(name) {
    return this.headers[name];
  }
  writeHead(status, headers) {
    this.statusCode = status;
    Object.assign(this.headers, headers);
    return this;
  }
  write() {
    return true;
  }
  end() {
    this.emit('finish');
    this.emit('close');
    return this;
  }
}

const HEADERS = {
  stateless: { 'content-type': 'application/json', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'echo.echo' },
  session: { 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 'bench' },
};
const TOOL = { name: 'echo.echo', harness: 'echo' };

/** One call's telemetry, as `gen` answers it. */
function call(i, gen, metrics, tracing) {
  const params = { name: 'echo.echo', arguments: { text: 'hello' } };
  if (gen === 'stateless') params._meta = ENVELOPE;
  const res = new Response();
  const traced = tracing?.mcpRequest(HEADERS[gen], { jsonrpc: '2.0', id: i, method: 'tools/call', params }, res, {
    address: '127.0.0.1',
    port: 1,
  });
  const work = () => {
    const started = performance.now();
    const trace = traced?.callTrace('echo', 'echo');
    const at = Date.now();
    trace?.started(at);
    if (trace?.sampled) trace.instantiated('echo', 'echo', 0, at, at + 0.01);
    trace?.ended(undefined);
    metrics?.callEnded('echo', 'echo', undefined, 0.0001, 0.0002);
    metrics?.operationEnded('tools/call', (performance.now() - started) / 1000, TOOL, undefined);
    const message = {
      result: { content: [{ type: 'text', text: '{"text":"hello"}' }], structuredContent: { text: 'hello' } },
      jsonrpc: '2.0',
      id: i,
    };
    traced?.answered(message);
    const text = JSON.stringify(message);
    if (gen === 'stateless') res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    else res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${text}\n\n`);
  };
  work();
}

/** CPU µs the main thread has used (Linux, to 10 ms; elsewhere every thread's). */
function mainThreadUs() {
  if (process.platform === 'linux') return cpuUs(process.pid, process.pid);
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** CPU µs per call of `calls` calls, on the main thread. */
async function loop(calls, gen, metrics, tracing) {
  const main = mainThreadUs;
  const from = main();
  for (let i = 0; i < calls; i++) {
    call(i, gen, metrics, tracing);
    if (i % 64 === 63) await new Promise((resolve) => setImmediate(resolve));
  }
  return (main() - from) / calls;
}

export async function telemetryWork({ calls }) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve) => child.stdout.once('data', (c) => resolve(String(c).trim())));
  const env = { OTEL_BSP_MAX_QUEUE_SIZE: '65536' };
  const telemetry = await Telemetry.create({ version: '0', sources: SOURCES, env: {} });
  const tracer = (sampler, ratio) =>
    Tracing.start(
      traceConfig({ otelExporterOtlpEndpoint: url, otelTracesSampler: sampler, otelTracesSamplerArg: ratio }, env),
      '0',
      (t) => t,
    );
  const configs = {
    off: {},
    metrics: { metrics: telemetry.metrics },
    'tracing, every call sampled': { metrics: telemetry.metrics, tracing: await tracer('always_on') },
    'tracing, 1 call in 10 sampled': { metrics: telemetry.metrics, tracing: await tracer('parentbased_traceidratio', '0.1') },
  };
  const rows = [];
  for (const gen of ['session', 'stateless']) {
    for (const c of Object.values(configs)) await loop(calls / 4, gen, c.metrics, c.tracing);
    const runs = Object.fromEntries(Object.keys(configs).map((k) => [k, []]));
    for (let r = 0; r < Math.max(ROUNDS, 5); r++)
      for (const [k, c] of Object.entries(configs)) runs[k].push(await loop(calls, gen, c.metrics, c.tracing));
    for (const [k, us] of Object.entries(runs)) {
      us.sort((a, b) => a - b);
      rows.push({ gen, config: k, min: us[0], median: us[Math.floor(us.length / 2)], max: us.at(-1) });
    }
  }
  for (const c of Object.values(configs)) await c.tracing?.close();
  await telemetry.close();
  child.kill();
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await telemetryWork({ calls: Number(process.env.BENCH_CALLS ?? 10000) });
  console.log(
    `${'telemetry work of one tools/call, main thread'.padEnd(48)} ${'min'.padStart(8)} ${'median'.padStart(8)} ${'max'.padStart(8)}  (CPU µs per call)`,
  );
  for (const r of rows)
    console.log(
      `${`${r.gen}: ${r.config}`.padEnd(48)} ${r.min.toFixed(1).padStart(8)} ${r.median.toFixed(1).padStart(8)} ${r.max.toFixed(1).padStart(8)}`,
    );
}
