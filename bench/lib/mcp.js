// What the /mcp and replica benchmarks share: raw JSON-RPC over keep-alive HTTP (an MCP session of
// POSTs, a deploy), the measuring loop and its best-of-rounds, and spawning a server (bermd) that
// prints where it listens. Kept out of bench/*.js because bench/run.js runs every file there.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const BERMD = fileURLToPath(new URL('../../packages/bermd/bin/bermd.js', import.meta.url));

// One keep-alive agent for every request: the client's cost is the same for both servers.
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export function post(url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export function put(url, bytes) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', agent, headers: { 'content-type': 'application/wasm' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode < 300 ? resolve() : reject(new Error(`deploy answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

/** The JSON-RPC message of an answer, whether sent as JSON or as one SSE event. */
export function message(res) {
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body}`);
  const text = res.headers['content-type']?.startsWith('text/event-stream')
    ? res.body
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .at(-1)
    : res.body;
  return JSON.parse(text);
}

export function check(name, m) {
  if (m.error || m.result.isError) throw new Error(`tools/call ${name}: ${JSON.stringify(m.error ?? m.result)}`);
  return m.result;
}

/**
 * A 2025-11-25 caller over raw POSTs: initialize, initialized, then tools/call on the session. With
 * `sdk`, each call travels as a batch of one, which bermd's fast path leaves to the SDK's transport.
 */
export async function session(url, sdk = false) {
  const init = await post(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
    }),
  );
  const id = init.headers['mcp-session-id'];
  const headers = id === undefined ? {} : { 'mcp-session-id': id, 'mcp-protocol-version': message(init).result.protocolVersion };
  await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  let next = 1;
  return async (name, args) => {
    const call = { jsonrpc: '2.0', id: next++, method: 'tools/call', params: { name, arguments: args } };
    return check(name, message(await post(url, JSON.stringify(sdk ? [call] : call), headers)));
  };
}

export const MODERN = '2026-07-28';
export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
};

/**
 * A 2026-07-28 caller: every call stands alone, with its version and capabilities in `_meta` and the
 * standard headers. With `sdk`, `_meta` carries a key bermd's fast path does not read, so the SDK's
 * stateless handler answers.
 */
export async function stateless(url, sdk = false) {
  const meta = sdk ? { ...ENVELOPE, 'example.com/bench': true } : ENVELOPE;
  let next = 1;
  return async (name, args) => {
    const call = { jsonrpc: '2.0', id: next++, method: 'tools/call', params: { name, arguments: args, _meta: meta } };
    const headers = { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name };
    return check(name, message(await post(url, JSON.stringify(call), headers)));
  };
}

/** CPU time (user + system, µs) a process has used, all threads or (`tid`) one; Linux only, else 0. */
export function cpuUs(pid, tid) {
  try {
    const fields = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8')
      .split(') ')[1]
      .split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}

export async function measure(label, calls, concurrency, callers, once, pid) {
  let next = 0;
  const latencies = [];
  const cpu0 = pid === undefined ? 0 : cpuUs(pid);
  const main0 = pid === undefined ? 0 : cpuUs(pid, pid);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, i) => {
      const caller = callers[i % callers.length];
      while (next++ < calls) {
        const t = performance.now();
        await once(caller);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const ms = performance.now() - start;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  const cpu = pid === undefined ? undefined : { all: (cpuUs(pid) - cpu0) / calls, main: (cpuUs(pid, pid) - main0) / calls };
  return { label, perSecond: calls / (ms / 1000), p50: at(0.5), p99: at(0.99), perCallUs: (ms * 1000) / calls, cpu };
}

export async function repeat(fn) {
  const results = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await fn());
  // The round with the best throughput: the machine is shared, and noise only ever slows a round down.
  return results.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
}

/** Spawns `node ...args` and resolves, once it prints the URL `pattern` captures, with a handle that stops it. */
export async function startServer(args, pattern) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    child.stdout.on('data', (c) => {
      out += c;
      const m = pattern.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before listening: ${err}`)));
  });
  return {
    url,
    pid: child.pid,
    async stop() {
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await done;
    },
  };
}

/** bermd on a state directory of its own, or on the PostgreSQL database `store` names. */
export async function startBermd(args = [], { store } = {}) {
  const state = store === undefined ? await mkdtemp(join(tmpdir(), 'berm-bench-mcp-')) : undefined;
  const server = await startServer(
    [BERMD, '--listen', '127.0.0.1:0', ...(store === undefined ? ['--state', state] : ['--store', store]), '--log-level', 'warn', ...args],
    /bermd listening on (http:\/\/\S+) /,
  );
  return {
    ...server,
    async stop() {
      await server.stop();
      if (state !== undefined) await rm(state, { recursive: true, force: true });
    },
  };
}

/** Lets the process end: the keep-alive sockets are closed. */
export function closeAgent() {
  agent.destroy();
}
