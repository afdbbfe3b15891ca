// What a receipt costs a tools/call, for bench/mcp.js (which prints it after telemetry) and on its own
// (`node bench/lib/receipts-cost.js`): one bermd serving one image with two tools that run the same guest
// code, `write` declared an external_write (retry idempotency_key: every call written `started` before
// the guest runs and completed after, each with a key of its own) and `echo` undeclared (no receipt), both
// called on the 2026-07-28 fast path, in turn round by round so the machine's slow spells fall on both.
// The store is a state directory, or the PostgreSQL database BENCH_STORE_URL names (postgres://...).
import { fileURLToPath } from 'node:url';
import { writeManifestSection } from '@berm/manifest';
import { ECHO_WAT, manifest, wat2wasm } from './guests.js';
import { check, closeAgent, message, post, put, startBermd } from './daemon.js';
import { ENVELOPE, MODERN, measure, repeatEach } from './mcp.js';

const KEY_META = 'io.berm/idempotency-key';

/** The echo guest with a second export, `write`, running the same code. */
function writerImage() {
  const wat = ECHO_WAT.replace(
    /\)$/,
    '\n  (func (export "berm_tool_write") (param $p i32) (param $n i32) (result i64) (call $ok_wrap (local.get $p) (local.get $n))))',
  );
  const data = manifest(['echo', 'write']);
  data.tools[1].effect = { kind: 'external_write', retry: 'idempotency_key' };
  return writeManifestSection(wat2wasm(wat), data);
}

/** A 2026-07-28 caller whose every call of `write` sends a key no call sent before, as a client deduplicating its writes does. */
function caller(url, run) {
  let next = 1;
  return async (name, args) => {
    const id = next++;
    const meta = name.endsWith('.write') ? { ...ENVELOPE, [KEY_META]: `bench-${run}-${id}` } : ENVELOPE;
    const call = { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: meta } };
    const headers = { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name };
    const result = check(name, message(await post(url, JSON.stringify(call), headers)));
    if (name.endsWith('.write') && result._meta?.[KEY_META] === undefined)
      throw new Error('write answered without its key: no receipt was kept');
    return result;
  };
}

/** Measures both tools; the rows, and the ratio of write's throughput to echo's. */
export async function receiptsCost({ calls, concurrency, extraArgs = [], storeUrl }) {
  const bermd = await startBermd(extraArgs, storeUrl === undefined ? {} : { store: storeUrl });
  try {
    await put(`${bermd.url}/harnesses/shop`, writerImage());
    const run = `${process.pid}-${Date.now()}`;
    const callers = Array.from({ length: concurrency }, (_, i) => caller(`${bermd.url}/mcp`, `${run}-${i}`));
    const store = storeUrl === undefined ? 'directory store' : 'PostgreSQL store';
    const tools = {
      undeclared: { label: `echo, effect undeclared (${store}), ${concurrency} in flight`, name: 'shop.echo' },
      write: { label: `write, external_write with receipts (${store}), ${concurrency} in flight`, name: 'shop.write' },
    };
    for (const tool of Object.values(tools)) await measure('warm-up', 300, concurrency, callers, (c) => c(tool.name, { text: 'hello' }));
    const best = await repeatEach(
      Object.entries(tools).map(([key, tool]) => [
        key,
        () => measure(tool.label, calls, concurrency, callers, (c) => c(tool.name, { text: 'hello' }), bermd.pid),
      ]),
    );
    return { rows: [best.undeclared, best.write], ratio: best.undeclared.perSecond / best.write.perSecond, store };
  } finally {
    await bermd.stop();
  }
}

/** Prints what `receiptsCost` measured. */
export function printReceiptsCost({ rows, ratio, store }) {
  const ms = (v) => `${v.toFixed(3)} ms`.padStart(10);
  const cpu = (m) => (m.cpu && m.cpu.all > 0 ? `${m.cpu.all.toFixed(0)} µs (main thread ${m.cpu.main.toFixed(0)} µs)` : '');
  console.log(`${'receipts'.padEnd(72)} ${'calls/s'.padStart(9)} ${'p50'.padStart(10)} ${'p99'.padStart(10)}  server CPU per call`);
  for (const r of rows) console.log(`${r.label.padEnd(72)} ${r.perSecond.toFixed(0).padStart(9)} ${ms(r.p50)} ${ms(r.p99)}  ${cpu(r)}`);
  const target = store === 'directory store' ? ' (target on the directory store: within 2x)' : '';
  console.log(`an external write with its receipt takes ${ratio.toFixed(2)}x the time of the same call undeclared${target}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  printReceiptsCost(
    await receiptsCost({
      calls: Number(process.env.BENCH_CALLS ?? 3000),
      concurrency: Number(process.env.BENCH_CONCURRENCY ?? 8),
      extraArgs: (process.env.BENCH_ARGS ?? '').split(' ').filter(Boolean),
      storeUrl: process.env.BENCH_STORE_URL,
    }),
  );
  closeAgent();
}
