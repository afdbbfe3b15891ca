// A real bermd for the benchmarks that talk to one, and the raw HTTP they speak to it: JSON-RPC POSTs
// to /mcp on keep-alive sockets, image PUTs, MCP sessions without the SDK (whose own costs would be
// measured too). Kept out of bench/*.js because bench/run.js runs every file there as a benchmark.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BERMD = fileURLToPath(new URL('../../packages/bermd/bin/bermd.js', import.meta.url));
/** Loaded into a bermd by `startBermd({ probe: true })`: reports its memory and handles on SIGUSR2 (see probe.js). */
const PROBE = fileURLToPath(new URL('./probe.js', import.meta.url));

/** The 2025 generation's latest version: what a session's `initialize` asks for. */
export const PROTOCOL_VERSION = '2025-11-25';

// One keep-alive agent for every request: the client's cost is the same for every server measured.
export const agent = new Agent({ keepAlive: true, maxSockets: 64 });

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

/** `DELETE` of `url` with `headers` (an MCP session's, to end it); resolves with the status. */
export function del(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'DELETE', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end();
  });
}

export function put(url, bytes, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', agent, headers: { 'content-type': 'application/wasm', ...headers } }, (res) => {
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

/** `initialize` over a raw POST: the session's id and the headers its requests carry. */
export async function initialize(url, protocolVersion = PROTOCOL_VERSION) {
  const init = await post(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
    }),
  );
  const id = init.headers['mcp-session-id'];
  const headers = id === undefined ? {} : { 'mcp-session-id': id, 'mcp-protocol-version': message(init).result.protocolVersion };
  return { id, headers };
}

/** A tools/call answer's result; an error is thrown, and an error result too unless `errors`. */
export function check(name, m, errors = false) {
  if (m.error || (m.result.isError && !errors)) throw new Error(`tools/call ${name}: ${JSON.stringify(m.error ?? m.result)}`);
  return m.result;
}

/**
 * A 2025-era MCP session over raw POSTs (initialize, initialized), as a function calling a tool and
 * answering its result. Options: `errors`, an error result is answered rather than thrown; `batch`, each
 * call travels as a batch of one (which bermd's fast path leaves to the SDK's transport); `protocolVersion`.
 */
export async function session(url, { errors = false, batch = false, protocolVersion } = {}) {
  const { headers } = await initialize(url, protocolVersion);
  await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  let next = 1;
  const call = async (name, args) => {
    const request = { jsonrpc: '2.0', id: next++, method: 'tools/call', params: { name, arguments: args } };
    return check(name, message(await post(url, JSON.stringify(batch ? [request] : request), headers)), errors);
  };
  call.headers = headers;
  return call;
}

/** The value at quantile `q` of `sorted`. */
export function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// A benchmark that fails midway leaves no server behind.
const running = new Set();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Spawns `node ...args` and resolves, once it prints the URL `pattern` captures, with a handle that stops it. */
export async function startServer(args, pattern, env = process.env) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let err = '';
  const waiters = new Set();
  child.stderr.on('data', (c) => {
    err += c;
    for (const check of [...waiters]) check();
  });
  const url = await new Promise((resolve, reject) => {
    let out = '';
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
    child,
    stderr: () => err,
    /** Resolves with the first stderr line, from `from` on, that `match` accepts. */
    waitForLine(match, from = 0) {
      return new Promise((resolve) => {
        const check = () => {
          const line = err.slice(from).split('\n').find(match);
          if (line !== undefined) {
            waiters.delete(check);
            resolve(line);
          }
        };
        waiters.add(check);
        check();
      });
    },
    async stop() {
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await done;
    },
  };
}

/**
 * A bermd on an ephemeral loopback port, at --log-level warn unless `args` say otherwise, on a state
 * directory of its own or on the PostgreSQL database `store` names, with `env` for its environment (this process's by default).
 */
export async function startBermd(args = [], { probe = false, store, env } = {}) {
  const state = store === undefined ? await mkdtemp(join(tmpdir(), 'berm-bench-')) : undefined;
  const node = probe ? ['--expose-gc', '--import', PROBE] : [];
  const where = state === undefined ? ['--store', store] : ['--state', state];
  const server = await startServer(
    [...node, BERMD, '--listen', '127.0.0.1:0', ...where, '--log-level', 'warn', ...args],
    /bermd listening on (http:\/\/\S+) /,
    env,
  );
  return {
    ...server,
    /** The state directory this bermd keeps its set in; undefined on PostgreSQL. */
    stateDir: state,
    /** What the probe reports now (after a full collection): rss, heapUsed, handles (see probe.js). */
    async probe() {
      const from = server.stderr().length;
      const line = server.waitForLine((l) => l.startsWith('{"probe":'), from);
      server.child.kill('SIGUSR2');
      return JSON.parse(await line).probe;
    },
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
