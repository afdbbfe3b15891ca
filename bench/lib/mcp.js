// What the /mcp and replica benchmarks share beside a daemon (lib/daemon.js): the 2026-07-28 caller,
// the measuring loop and its best-of-rounds. Kept out of bench/*.js because bench/run.js runs every
// file there.
import { check, cpuUs, message, post, quantile } from './daemon.js';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

export const MODERN = '2026-07-28';
export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
};

/**
 * A 2026-07-28 caller: every call stands alone, with its version and capabilities in `_meta` and the
 * standard headers. With `sdk`, `_meta` carries a key bermd's fast path does not read, so the SDK's
 * stateless handler answers. `extra` headers go with every call (an `Authorization`); a function gives each call's own.
 */
export async function stateless(url, sdk = false, extra = {}) {
  const meta = sdk ? { ...ENVELOPE, 'example.com/bench': true } : ENVELOPE;
  let next = 1;
  return async (name, args) => {
    const call = { jsonrpc: '2.0', id: next++, method: 'tools/call', params: { name, arguments: args, _meta: meta } };
    const headers = {
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name,
      ...(typeof extra === 'function' ? extra() : extra),
    };
    return check(name, message(await post(url, JSON.stringify(call), headers)));
  };
}

/** Runs `calls` calls of `once`, `concurrency` at a time over `callers`; throughput, p50, p99 and (with `pid`) server CPU per call. */
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
  const at = (q) => quantile(latencies, q);
  const cpu = pid === undefined ? undefined : { all: (cpuUs(pid) - cpu0) / calls, main: (cpuUs(pid, pid) - main0) / calls };
  return { label, perSecond: calls / (ms / 1000), p50: at(0.5), p99: at(0.99), perCallUs: (ms * 1000) / calls, cpu };
}

/**
 * `ROUNDS` rounds of every `[name, fn]` in `measurers`, in turn within each round; the best round of each
 * by throughput, by name.
 */
export async function repeatEach(measurers) {
  const best = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, fn] of measurers) {
      const result = await fn();
      if (best[name] === undefined || result.perSecond > best[name].perSecond) best[name] = result;
    }
  }
  return best;
}

export async function repeat(fn) {
  const results = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await fn());
  // The round with the best throughput: the machine is shared, and noise only ever slows a round down.
  return results.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
}
