// Benchmark (not a test) of how bermd's start and lists grow with the deployed set: BENCH_HARNESSES
// harnesses (the echo example, two tools each, deployed under as many names), against a baseline of
// BENCH_BASELINE harnesses measured the same way in the same run.
//
// For each size: the set is deployed once over HTTP (BENCH_CONCURRENCY deploys in flight) into a state
// directory, bermd is stopped and started again on it, and then:
// - restart: from the process's spawn to its first answer (a 2026-07-28 tools/list): bermd listens only
//   once the whole set is restored, so this is the time a replica takes to serve;
// - tools/list p50 over BENCH_LISTS requests, 2026-07-28 (stateless) and 2025 (a session), from the request
//   to the answer's last byte: what the server and the wire cost. Turning a megabyte of bytes into a
//   string is the client's own work, the same whichever server sent them, and on this machine it costs
//   more than the transfer: it is measured apart and printed beside the list's figure;
// - RSS after the lists; the RSS per harness is the growth from the baseline's, over the harnesses added.
// Targets on the 2-core machine this was written on: 1,000 harnesses restored to first answer in < 5 s,
// tools/list p50 < 5 ms.
//
// Build first: npm run build. Run: node bench/scale.js
// Settings: BENCH_HARNESSES (1000), BENCH_BASELINE (10), BENCH_LISTS (200), BENCH_CONCURRENCY (8).
import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BERMD, agent, closeAgent, initialize, message, post, put, quantile, startServer } from './lib/daemon.js';

const HARNESSES = Number(process.env.BENCH_HARNESSES ?? 1000);
const BASELINE = Number(process.env.BENCH_BASELINE ?? 10);
const LISTS = Number(process.env.BENCH_LISTS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const echo = readFileSync(new URL('../examples/echo.wasm', import.meta.url));

const MODERN = '2026-07-28';
const modernList = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/list',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
    },
  },
});
const modernHeaders = { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' };

const start = (state) =>
  startServer([BERMD, '--listen', '127.0.0.1:0', '--state', state, '--log-level', 'warn'], /bermd listening on (http:\/\/\S+) /);

function rssBytes(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return line === undefined ? Number.NaN : Number(line.split(/\s+/)[1]) * 1024;
}

/** The tools listed by one answer, checked: a list that lost a harness would measure something else. */
function toolCount(res) {
  return message(res).result.tools.length;
}

/** A POST whose answer is read to its last byte and kept as bytes: the timing ends where the server's part does. */
function postBytes(url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, bytes: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The answer of `postBytes` as `message` reads it, decoded after the timing. */
const decoded = (res) => message({ ...res, body: res.bytes.toString('utf8') });

async function p50(ask) {
  const times = [];
  for (let i = 0; i < LISTS; i++) {
    const t0 = performance.now();
    await ask();
    times.push(performance.now() - t0);
  }
  return quantile(
    times.sort((a, b) => a - b),
    0.5,
  );
}

async function measure(count) {
  const state = await mkdtemp(join(tmpdir(), 'berm-bench-scale-'));
  try {
    const first = await start(state);
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < count; i = next++) await put(`${first.url}/harnesses/h${i}`, echo);
      }),
    );
    const deployMs = performance.now() - t0;
    await first.stop();

    const t1 = performance.now();
    const d = await start(state);
    const answer = await post(`${d.url}/mcp`, modernList, modernHeaders);
    const restartMs = performance.now() - t1;
    if (toolCount(answer) !== 2 * count) throw new Error(`restored ${toolCount(answer) / 2} harnesses of ${count}`);
    const bytes = Buffer.byteLength(answer.body);
    const modern = await p50(() => postBytes(`${d.url}/mcp`, modernList, modernHeaders));
    const last = await postBytes(`${d.url}/mcp`, modernList, modernHeaders);
    if (decoded(last).result.tools.length !== 2 * count) throw new Error('a timed list lost tools');
    const decode = await p50(() => Promise.resolve(last.bytes.toString('utf8')));
    const { headers } = await initialize(`${d.url}/mcp`);
    await post(`${d.url}/mcp`, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
    const legacyList = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const legacy = await p50(() => postBytes(`${d.url}/mcp`, legacyList, headers));
    if (decoded(await postBytes(`${d.url}/mcp`, legacyList, headers)).result.tools.length !== 2 * count)
      throw new Error('a timed 2025 list lost tools');
    const rss = rssBytes(d.pid);
    await d.stop();
    return { count, deployMs, restartMs, bytes, modern, decode, legacy, rss };
  } finally {
    await rm(state, { recursive: true, force: true });
  }
}

/** The floor of a list of `bytes`: a bare Node server answering that many bytes to the same client, in the same run. */
async function bare(bytes) {
  const body = Buffer.alloc(bytes, 0x20);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes }).end(body));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await p50(() => postBytes(`http://127.0.0.1:${server.address().port}/`, '{}'));
  } finally {
    server.close();
  }
}

const fmt = (ms) => `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(1)}x`;
try {
  const base = await measure(BASELINE);
  const big = await measure(HARNESSES);
  const floor = await bare(big.bytes);
  console.log(`bermd with ${HARNESSES} harnesses (${2 * HARNESSES} tools) against ${BASELINE} (the baseline), the echo example`);
  console.log(
    `  deploy, ${CONCURRENCY} in flight   ${fmt(big.deployMs)} (baseline ${fmt(base.deployMs)}, ${ratio(big.deployMs, base.deployMs)})`,
  );
  console.log(
    `  restart to first answer   ${fmt(big.restartMs)} (baseline ${fmt(base.restartMs)}, ${ratio(big.restartMs, base.restartMs)}; target < 5000 ms)`,
  );
  console.log(
    `  tools/list 2026-07-28 p50 ${fmt(big.modern)} for ${(big.bytes / 1e6).toFixed(2)} MB (baseline ${fmt(base.modern)}, ${ratio(big.modern, base.modern)}; target < 5 ms)`,
  );
  console.log(`  the same bytes from a bare Node server, p50 ${fmt(floor)} (the list's ${ratio(big.modern, floor)} of it)`);
  console.log(`  the client's decode of those bytes into text, p50 ${fmt(big.decode)} (not in the figures above)`);
  console.log(`  tools/list 2025 p50       ${fmt(big.legacy)} (baseline ${fmt(base.legacy)}, ${ratio(big.legacy, base.legacy)})`);
  const perHarness = (big.rss - base.rss) / (HARNESSES - BASELINE);
  console.log(
    `  RSS                       ${(big.rss / 1e6).toFixed(0)} MB (baseline ${(base.rss / 1e6).toFixed(0)} MB): ${(perHarness / 1e3).toFixed(0)} KB per harness`,
  );
} finally {
  closeAgent();
}
