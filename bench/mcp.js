// Benchmark of /mcp (not a test): tools/call of a trivial tool through a real bermd process, in both
// protocol generations side by side (2025-11-25 on a session, 2026-07-28 stateless), against a bare
// Node HTTP server answering the same JSON-RPC shape of each, measured in the same run by the same
// client. Each generation is measured on bermd's fast path and on the SDK's path (the same call sent
// so that the fast path leaves it to the SDK: as a batch of one on a session, with a `_meta` key the
// fast path does not read in 2026-07-28), which is what decides whether the fast path stays.
// And on a second bermd started with --mcp-fast-path false, where every request goes through the SDK.
// Also: what instantiating a guest costs per call, what one level of berm.call adds, and what knowing who
// calls costs: the same calls to a bermd without auth, with a static token (--access) and verifying a JWT
// access token on every request (--oauth-issuer, against a stand-in authorization server in this process).
// Then what telemetry costs: metrics, and tracing fully sampled, against telemetry off (lib/telemetry-cost.js).
// Last, what a receipt costs: an external_write tool against the same tool undeclared (lib/receipts-cost.js),
// on the directory store, or on the PostgreSQL database BENCH_STORE_URL names.
// Build first: npm run build. Run: node bench/mcp.js
// BENCH_ARGS adds bermd flags to every daemon it starts (e.g. "--max-concurrency 2").
import { createHash, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { CHAIN_WAT, ECHO_WAT, image, wat2wasm } from './lib/guests.js';
import { startBare } from './lib/bare.js';
import { closeAgent, put, session, startBermd } from './lib/daemon.js';
import { MODERN, measure, ROUNDS, repeat, repeatEach, stateless } from './lib/mcp.js';
import { printReceiptsCost, receiptsCost } from './lib/receipts-cost.js';
import { printTelemetryCost, telemetryCost } from './lib/telemetry-cost.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const EXTRA = (process.env.BENCH_ARGS ?? '').split(' ').filter(Boolean);

const echoImage = image(ECHO_WAT, ['echo']);
const chainImage = image(CHAIN_WAT, ['chain', 'echo']);

const ARGS = { text: 'hello' };
const callers = CONCURRENCY;

// 1. /mcp against the bare server, in each generation, on each path: one call in flight (latency) and
// CONCURRENCY (throughput).
const bermd = await startBermd(EXTRA);
await put(`${bermd.url}/harnesses/echo`, echoImage);
await put(`${bermd.url}/harnesses/chain`, chainImage);
// The same calls to a bermd with every bypass off: what --mcp-fast-path false costs a user who compares.
const bermdOff = await startBermd([...EXTRA, '--mcp-fast-path', 'false']);
await put(`${bermdOff.url}/harnesses/echo`, echoImage);
const bare = await startBare();
const callersOf = (make, url, sdk) => Promise.all(Array.from({ length: callers }, () => make(`${url}/mcp`, sdk)));
const GENERATIONS = [
  { name: '2025-11-25 (session)', make: (url, sdk) => session(url, { batch: sdk }) },
  { name: `${MODERN} (stateless)`, make: stateless },
];
const echo = (c) => c('echo.echo', ARGS);
const rows = [];
const sideBySide = [];
for (const generation of GENERATIONS) {
  const paths = {
    bare: { label: 'bare server', callers: await callersOf(generation.make, bare.url, false), pid: bare.pid },
    fast: { label: 'bermd /mcp (fast path)', callers: await callersOf(generation.make, bermd.url, false), pid: bermd.pid },
    sdk: { label: "bermd /mcp (SDK's path)", callers: await callersOf(generation.make, bermd.url, true), pid: bermd.pid },
    off: { label: 'bermd /mcp (--mcp-fast-path false)', callers: await callersOf(generation.make, bermdOff.url, false), pid: bermdOff.pid },
  };
  const probe = await paths.fast.callers[0]('echo.echo', ARGS);
  if (probe.content[0].text !== JSON.stringify(ARGS)) throw new Error(`echo answered ${JSON.stringify(probe)}`);
  // Warm every path (JIT, sockets, workers) before measuring.
  for (const path of Object.values(paths)) await measure('warm-up', 500, CONCURRENCY, path.callers, echo);
  // Round by round, every path in turn: the machine's slow spells fall on all of them alike, rather than
  // on whichever path was being measured through one.
  const best = await repeatEach(
    Object.entries(paths).flatMap(([key, path]) => [
      [`${key} serial`, () => measure(`${generation.name}: ${path.label}, 1 in flight`, CALLS / 2, 1, path.callers, echo)],
      [
        `${key} parallel`,
        () => measure(`${generation.name}: ${path.label}, ${CONCURRENCY} in flight`, CALLS, CONCURRENCY, path.callers, echo, path.pid),
      ],
    ]),
  );
  const measured = {};
  for (const key of Object.keys(paths)) {
    measured[key] = { serial: best[`${key} serial`], parallel: best[`${key} parallel`] };
    rows.push(measured[key].serial, measured[key].parallel);
  }
  sideBySide.push({ generation: generation.name, ...measured });
}
await bare.stop();
await bermd.stop();
await bermdOff.stop();

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
  const d = await startBermd([...EXTRA, '--max-call-depth', String(depth)]);
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

// 4. Who is calling: 2026-07-28 tools/call on the fast path, CONCURRENCY in flight, to three bermds alike
// but for auth. The static token is hashed and compared. A JWT is verified (signature, issuer, audience,
// lifetime) with the authorization server's key, fetched once and held, then kept until it expires: sent
// again (as clients do) it costs a lookup, and a new token on every call is verified on every request.
const RESOURCE = 'https://berm.bench.test/mcp';
const { privateKey, publicKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
const authServer = createServer((req, res) => {
  const origin = `http://127.0.0.1:${authServer.address().port}`;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(req.url === '/jwks' ? { keys: [jwk] } : { issuer: origin, jwks_uri: `${origin}/jwks` }));
});
await new Promise((resolve) => authServer.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${authServer.address().port}`;
const signJwt = (n) =>
  new SignJWT({ scope: 'berm:call berm:deploy', client_id: 'bench', n })
    .setProtectedHeader({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' })
    .setIssuer(issuer)
    .setAudience(RESOURCE)
    .setSubject('bench')
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey);
const jwt = await signJwt(0);
// One token per call of the warm-up and every round, each sent once: none is found among those kept.
const fresh = await Promise.all(Array.from({ length: 500 + CALLS * ROUNDS }, (_, n) => signJwt(n + 1)));
let nextFresh = 0;
const staticToken = `berm_${randomBytes(32).toString('base64url')}`;
const accessFile = join(tmpdir(), `berm-bench-access-${process.pid}.json`);
const digest = createHash('sha256').update(staticToken).digest('hex');
await writeFile(accessFile, JSON.stringify([{ name: 'bench', token_sha256: digest, scopes: ['berm:call', 'berm:deploy'] }]));
const auths = {
  none: { label: 'no auth', args: [], headers: {} },
  static: { label: 'static token (--access)', args: ['--access', accessFile], headers: { authorization: `Bearer ${staticToken}` } },
  jwt: {
    label: 'JWT, the same on every call (--oauth-issuer)',
    args: ['--oauth-issuer', issuer, '--resource', RESOURCE],
    headers: { authorization: `Bearer ${jwt}` },
  },
  fresh: {
    label: 'JWT, a new one on every call (verified each time)',
    args: ['--oauth-issuer', issuer, '--resource', RESOURCE],
    headers: { authorization: `Bearer ${jwt}` },
    perCall: () => ({ authorization: `Bearer ${fresh[nextFresh++]}` }),
  },
};
for (const auth of Object.values(auths)) {
  auth.bermd = await startBermd([...EXTRA, ...auth.args]);
  await put(`${auth.bermd.url}/harnesses/echo`, echoImage, auth.headers);
  auth.callers = await Promise.all(
    Array.from({ length: callers }, () => stateless(`${auth.bermd.url}/mcp`, false, auth.perCall ?? auth.headers)),
  );
  await measure('warm-up', 500, CONCURRENCY, auth.callers, echo);
}
const byAuth = await repeatEach(
  Object.entries(auths).map(([key, auth]) => [
    key,
    () => measure(`${MODERN}: bermd /mcp, ${auth.label}, ${CONCURRENCY} in flight`, CALLS, CONCURRENCY, auth.callers, echo, auth.bermd.pid),
  ]),
);
for (const auth of Object.values(auths)) await auth.bermd.stop();
authServer.close();
await rm(accessFile, { force: true });
rows.push(...Object.keys(auths).map((key) => byAuth[key]));

// 5. Telemetry: off, metrics, tracing fully sampled.
const telemetry = await telemetryCost({ calls: CALLS, concurrency: CONCURRENCY, extraArgs: EXTRA });

// 6. Receipts: an external write against the same call undeclared.
const receipts = await receiptsCost({ calls: CALLS, concurrency: CONCURRENCY, extraArgs: EXTRA, storeUrl: process.env.BENCH_STORE_URL });

const ms = (v) => `${v.toFixed(3)} ms`.padStart(10);
console.log(
  `node ${process.version}, best of ${ROUNDS} rounds, ${CALLS} calls, raw JSON-RPC POSTs on keep-alive sockets, bermd at --log-level warn\n`,
);
console.log(`${'measured'.padEnd(72)} ${'calls/s'.padStart(9)} ${'p50'.padStart(10)} ${'p99'.padStart(10)}`);
for (const r of rows) console.log(`${r.label.padEnd(72)} ${r.perSecond.toFixed(0).padStart(9)} ${ms(r.p50)} ${ms(r.p99)}`);
console.log('');
// Both generations side by side: throughput against the bare server answering the same generation's shape.
const ratio = (a, b) => `${(a.perSecond / b.perSecond).toFixed(2)}x`;
const cell = (m, bareM) =>
  `${m.perSecond.toFixed(0).padStart(6)}/s ${ratio(m, bareM).padStart(6)}  p50 ${m.p50.toFixed(2)}  p99 ${m.p99.toFixed(2)}`;
console.log(`${`${CONCURRENCY} in flight, vs the bare server`.padEnd(26)} ${sideBySide.map((g) => g.generation.padEnd(44)).join(' ')}`);
for (const [key, label] of [
  ['bare', 'bare server'],
  ['fast', 'bermd, fast path'],
  ['sdk', "bermd, SDK's path"],
  ['off', 'bermd, fast path off'],
]) {
  console.log(`${label.padEnd(26)} ${sideBySide.map((g) => cell(g[key].parallel, g.bare.parallel).padEnd(44)).join(' ')}`);
}
console.log(
  `${'1 in flight, p50'.padEnd(26)} ${sideBySide.map((g) => `bare ${g.bare.serial.p50.toFixed(3)} ms, fast ${g.fast.serial.p50.toFixed(3)} ms, SDK ${g.sdk.serial.p50.toFixed(3)} ms`.padEnd(44)).join(' ')}`,
);
console.log('');
for (const g of sideBySide) {
  console.log(
    `${g.generation}: bermd / bare throughput, ${CONCURRENCY} in flight: ${ratio(g.fast.parallel, g.bare.parallel)} (target >= 0.33; the SDK's path: ${ratio(g.sdk.parallel, g.bare.parallel)}; --mcp-fast-path false: ${ratio(g.off.parallel, g.bare.parallel)})`,
  );
  if (g.fast.parallel.cpu && g.fast.parallel.cpu.all > 0) {
    // CPU per call is steadier than throughput on a shared machine, and says where the time goes.
    const main = (m) => `${m.cpu.all.toFixed(0)} µs (main thread ${m.cpu.main.toFixed(0)} µs)`;
    console.log(
      `  server CPU per call: bare ${g.bare.parallel.cpu.all.toFixed(0)} µs; bermd fast path ${main(g.fast.parallel)}; SDK's path ${main(g.sdk.parallel)}; fast path off ${main(g.off.parallel)}`,
    );
  }
}
console.log(
  `bermd p50, 1 in flight:                  ${sideBySide.map((g) => `${g.fast.serial.p50.toFixed(3)} ms`).join(' / ')} (target < 2 ms)`,
);
console.log('');
console.log(
  `${`${MODERN}, ${CONCURRENCY} in flight, vs no auth`.padEnd(44)} ${'calls/s'.padStart(9)} ${'ratio'.padStart(7)} ${'p50'.padStart(10)} ${'p99'.padStart(10)}  server CPU per call`,
);
for (const [key, auth] of Object.entries(auths)) {
  const m = byAuth[key];
  const cpu = m.cpu && m.cpu.all > 0 ? `${m.cpu.all.toFixed(0)} µs (main thread ${m.cpu.main.toFixed(0)} µs)` : '';
  console.log(
    `${auth.label.padEnd(44)} ${m.perSecond.toFixed(0).padStart(9)} ${ratio(m, byAuth.none).padStart(7)} ${ms(m.p50)} ${ms(m.p99)}  ${cpu}`,
  );
}
console.log(
  `JWT / static token throughput:           ${ratio(byAuth.jwt, byAuth.static)} (target >= 0.90; a new JWT on every call: ${ratio(byAuth.fresh, byAuth.static)})`,
);
console.log(`instantiate + call:                      ${instantiation.perCallUs.toFixed(1)} µs per call`);
console.log(`one berm.call level (p50 slope):         ${(perLevelMs * 1000).toFixed(0)} µs`);
console.log('');
printTelemetryCost(telemetry);
console.log('');
printReceiptsCost(receipts);
closeAgent();
