// Benchmark of /mcp (not a test): tools/call of a trivial tool through a real bermd process, against a
// bare Node HTTP server answering the same JSON-RPC shape, measured in the same run by the same client.
// Also: what instantiating a guest costs per call, and what one level of berm.call adds.
// Build first: npx tsc -b packages/bermd. Run: node bench/mcp.js
import { CHAIN_WAT, ECHO_WAT, image, wat2wasm } from './lib/guests.js';
import { closeAgent, measure, put, ROUNDS, repeat, session, startBermd, startServer } from './lib/mcp.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

const echoImage = image(ECHO_WAT, ['echo']);
const chainImage = image(CHAIN_WAT, ['chain', 'echo']);

// The bare server: node:http answering every POST to /mcp with the same result shape bermd sends for
// the echo tool (a session id on initialize, the result as one SSE event), and nothing else.
const BARE = `
import { createServer } from 'node:http';
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (msg.id === undefined) { res.writeHead(202).end(); return; }
    const result = msg.method === 'initialize'
      ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bare', version: '0' } }
      : { content: [{ type: 'text', text: JSON.stringify(msg.params.arguments) }] };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'mcp-session-id': 'bare' });
    res.end('event: message\\ndata: ' + JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }) + '\\n\\n');
  });
});
server.listen(0, '127.0.0.1', () => console.log('bare listening on http://127.0.0.1:' + server.address().port + ' '));
`;

function startBare() {
  return startServer(['--input-type=module', '-e', BARE], /bare listening on (http:\/\/\S+) /);
}

const ARGS = { text: 'hello' };
const callers = CONCURRENCY;

// 1. /mcp against the bare server, one call in flight (latency) and CONCURRENCY (throughput).
const bermd = await startBermd();
await put(`${bermd.url}/harnesses/echo`, echoImage);
await put(`${bermd.url}/harnesses/chain`, chainImage);
const bare = await startBare();
const mcpCallers = await Promise.all(Array.from({ length: callers }, () => session(`${bermd.url}/mcp`)));
const bareCallers = await Promise.all(Array.from({ length: callers }, () => session(`${bare.url}/mcp`)));
const probe = await mcpCallers[0]('echo.echo', ARGS);
if (probe.content[0].text !== JSON.stringify(ARGS)) throw new Error(`echo answered ${JSON.stringify(probe)}`);
// Warm both (JIT, sockets, workers) before measuring.
await measure('warm-up', 500, CONCURRENCY, mcpCallers, (c) => c('echo.echo', ARGS));
await measure('warm-up', 500, CONCURRENCY, bareCallers, (c) => c('echo.echo', ARGS));

const rows = [];
const bareSerial = await repeat(() => measure('bare server, 1 in flight', CALLS / 2, 1, bareCallers, (c) => c('echo.echo', ARGS)));
const mcpSerial = await repeat(() => measure('bermd /mcp echo, 1 in flight', CALLS / 2, 1, mcpCallers, (c) => c('echo.echo', ARGS)));
const bareParallel = await repeat(() =>
  measure(`bare server, ${CONCURRENCY} in flight`, CALLS, CONCURRENCY, bareCallers, (c) => c('echo.echo', ARGS), bare.pid),
);
const mcpParallel = await repeat(() =>
  measure(`bermd /mcp echo, ${CONCURRENCY} in flight`, CALLS, CONCURRENCY, mcpCallers, (c) => c('echo.echo', ARGS), bermd.pid),
);
rows.push(bareSerial, mcpSerial, bareParallel, mcpParallel);
await bare.stop();
await bermd.stop();

// 2. Instantiation, the per-call cost of the runtime's design (a fresh instance per call), here on the main thread.
const echoModule = await WebAssembly.compile(wat2wasm(ECHO_WAT));
const argBytes = new TextEncoder().encode(JSON.stringify(ARGS));
function instantiateAndCall() {
  const { memory, berm_alloc: alloc, berm_tool_echo: echo } = new WebAssembly.Instance(echoModule, {}).exports;
  const ptr = alloc(argBytes.length);
  new Uint8Array(memory.buffer).set(argBytes, ptr);
  return echo(ptr, argBytes.length);
}
const instantiation = await repeat(() =>
  measure('instantiate + call, main thread', CALLS * 4, 1, [null], async () => instantiateAndCall()),
);
rows.push(instantiation);

// 3. berm.call: the chain tool at depth limits 0, 2 and 4, one bermd each; the slope is one nested level.
const levels = [];
for (const depth of [0, 2, 4]) {
  const d = await startBermd(['--max-call-depth', String(depth)]);
  await put(`${d.url}/harnesses/chain`, chainImage);
  const cs = await Promise.all(Array.from({ length: callers }, () => session(`${d.url}/mcp`)));
  await measure('warm-up', 300, CONCURRENCY, cs, (c) => c('chain.chain', { program: 'chain' }));
  levels.push({
    depth,
    ...(await repeat(() =>
      measure(`bermd /mcp chain, ${depth} nested levels, 1 in flight`, CALLS / 4, 1, cs, (c) => c('chain.chain', { program: 'chain' })),
    )),
  });
  await d.stop();
}
rows.push(...levels);
const perLevelMs = (levels.at(-1).p50 - levels[0].p50) / levels.at(-1).depth;

const ms = (v) => `${v.toFixed(3)} ms`.padStart(10);
console.log(
  `node ${process.version}, best of ${ROUNDS} rounds, ${CALLS} calls, raw JSON-RPC POSTs on keep-alive sockets, bermd at --log-level warn\n`,
);
console.log(`${'measured'.padEnd(52)} ${'calls/s'.padStart(9)} ${'p50'.padStart(10)} ${'p99'.padStart(10)}`);
for (const r of rows) console.log(`${r.label.padEnd(52)} ${r.perSecond.toFixed(0).padStart(9)} ${ms(r.p50)} ${ms(r.p99)}`);
console.log('');
console.log(
  `bermd / bare throughput, ${CONCURRENCY} in flight:   ${(mcpParallel.perSecond / bareParallel.perSecond).toFixed(2)} (target >= 0.33)`,
);
console.log(`bermd / bare throughput, 1 in flight:    ${(mcpSerial.perSecond / bareSerial.perSecond).toFixed(2)}`);
console.log(`bermd p50, 1 in flight:                  ${mcpSerial.p50.toFixed(3)} ms (target < 2 ms)`);
if (mcpParallel.cpu && mcpParallel.cpu.all > 0) {
  // CPU per call is steadier than throughput on a shared machine, and says where the time goes.
  console.log(
    `server CPU per call, ${CONCURRENCY} in flight:    bare ${bareParallel.cpu.all.toFixed(0)} µs; bermd ${mcpParallel.cpu.all.toFixed(0)} µs (main thread ${mcpParallel.cpu.main.toFixed(0)} µs, tool workers ${(mcpParallel.cpu.all - mcpParallel.cpu.main).toFixed(0)} µs)`,
  );
}
console.log(`instantiate + call:                      ${(instantiation.perCallUs).toFixed(1)} µs per call`);
console.log(`one berm.call level (p50 slope):         ${(perLevelMs * 1000).toFixed(0)} µs`);
closeAgent();
