#!/usr/bin/env node
// Reading an image's manifest from a registry costs the same whatever the image's size: `crab inspect REF`
// against `crab pull REF`, for a small image and a 20 MB one (the same module and manifest, grown by a
// custom section), both pushed by `crab push` to Debian's docker-registry on loopback and read through a
// relay that counts the bytes crossing it; each command ROUNDS times (default 5), the four interleaved
// so that load on the machine hits all alike, the medians printed with the ratios large/small.
// A benchmark, not a test: it prints figures and asserts nothing but that each command did its work.
//
// Nothing here waits without a bound: every crab run has a time limit (CRAB_LIMIT_MS, default 120 s),
// the whole run another (BENCH_LIMIT_MS, default 15 min), past which what it started is stopped and it
// exits non-zero; the registry's output is read while it runs, and the relay's sockets are closed.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ECHO_WAT, image, padded } from './lib/guests.js';
import { startCountingRelay, startRegistry } from './lib/registry.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const CRAB_LIMIT_MS = Number(process.env.CRAB_LIMIT_MS ?? 120_000);
const BENCH_LIMIT_MS = Number(process.env.BENCH_LIMIT_MS ?? 15 * 60_000);
const LARGE = 20 * 1024 * 1024;
const repo = fileURLToPath(new URL('..', import.meta.url));
const CRAB = join(repo, 'bin', 'crab');

const sha256 = (bytes) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mb = (n) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} KB`);

const started = [];
async function cleanup() {
  for (const stop of started.splice(0).reverse()) await stop().catch((e) => console.error(`cleanup: ${e.message}`));
}

// The whole run's bound: unref'd, so it never keeps the process alive once the work is done.
setTimeout(() => {
  console.error(`bench/oci.js: over ${BENCH_LIMIT_MS / 1000} s; stopping what it started`);
  void cleanup().finally(() => process.exit(1));
}, BENCH_LIMIT_MS).unref();

const scratch = await mkdtemp(join(tmpdir(), 'berm-bench-oci-'));
started.push(() => rm(scratch, { recursive: true, force: true }));
// No credentials from this machine: docker's config is looked for where there is none.
const env = { ...process.env, DOCKER_CONFIG: join(scratch, 'no-docker'), NO_COLOR: '1' };
delete env.BERM_REGISTRY_AUTH;

/** One crab run, timed; refused past CRAB_LIMIT_MS (the child killed) or on a non-zero exit. */
function crab(args) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    execFile(
      process.execPath,
      [CRAB, ...args],
      { cwd: repo, env, timeout: CRAB_LIMIT_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (error) {
          const why = error.killed ? `killed after ${CRAB_LIMIT_MS / 1000} s` : `exit ${error.code}`;
          reject(new Error(`crab ${args.join(' ')}: ${why}\n${stderr}`));
        } else resolve({ ms, stdout });
      },
    );
  });
}

/** `node -e 0`, timed as crab is: what any crab run spends before it does anything. */
function node0() {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    execFile(process.execPath, ['-e', '0'], { timeout: CRAB_LIMIT_MS, killSignal: 'SIGKILL' }, (error) =>
      error ? reject(error) : resolve(Number(process.hrtime.bigint() - t0) / 1e6),
    );
  });
}

try {
  const registry = await startRegistry();
  started.push(registry.stop);
  const relay = await startCountingRelay(registry.host);
  started.push(relay.close);

  const small = image(ECHO_WAT, ['echo']);
  const images = { small, large: padded(small, LARGE) };
  const refs = {};
  for (const [size, bytes] of Object.entries(images)) {
    const file = join(scratch, `${size}.wasm`);
    await writeFile(file, bytes);
    const pushed = await crab(['push', file, `oci://${registry.host}/bench/${size}:1`]);
    refs[size] = `oci://${relay.host}/bench/${size}:1`;
    console.log(`pushed ${size}: ${mb(bytes.length)} image, manifest ${pushed.stdout.trim().slice(0, 19)}… in ${pushed.ms.toFixed(0)} ms`);
  }

  const rows = [];
  for (const size of ['small', 'large'])
    for (const command of ['inspect', 'pull']) rows.push({ size, command, ms: [], bytes: [], requests: [] });
  const out = join(scratch, 'pulled.wasm');
  const argsOf = (row) =>
    row.command === 'inspect' ? ['inspect', '--json', refs[row.size]] : ['pull', '--json', refs[row.size], '-o', out];

  // One untimed round warms the file system cache and the registry.
  for (const row of rows) await crab(argsOf(row));
  let expected;
  const floor = [];
  for (let round = 0; round < ROUNDS; round++) {
    floor.push(await node0());
    for (const row of rows) {
      relay.reset();
      const { ms, stdout } = await crab(argsOf(row));
      const moved = relay.reset();
      // Each command did its work: the same manifest read from either image, the image's own bytes pulled.
      if (row.command === 'inspect') {
        expected ??= stdout;
        if (stdout !== expected) throw new Error(`crab inspect of ${row.size} answered another manifest`);
      } else if (sha256(await readFile(out)) !== sha256(images[row.size])) {
        throw new Error(`crab pull of ${row.size} wrote other bytes than were pushed`);
      }
      row.ms.push(ms);
      row.bytes.push(moved.received + moved.sent);
      row.requests.push(moved.requests);
    }
  }

  const of = (size, command) => rows.find((r) => r.size === size && r.command === command);
  console.log(
    `\n${'image'.padEnd(14)}${'command'.padEnd(13)}${'median'.padStart(10)}${'bytes moved'.padStart(14)}${'requests'.padStart(10)}`,
  );
  for (const row of rows) {
    console.log(
      `${`${row.size} ${mb(images[row.size].length)}`.padEnd(14)}${`crab ${row.command}`.padEnd(13)}` +
        `${`${median(row.ms).toFixed(0)} ms`.padStart(10)}${mb(median(row.bytes)).padStart(14)}${String(median(row.requests)).padStart(10)}`,
    );
  }
  for (const command of ['inspect', 'pull']) {
    const s = of('small', command);
    const l = of('large', command);
    console.log(
      `crab ${command}, 20 MB image against the small one: time ${(median(l.ms) / median(s.ms)).toFixed(2)}x, ` +
        `bytes ${(median(l.bytes) / median(s.bytes)).toFixed(2)}x`,
    );
  }
  const li = of('large', 'inspect');
  const lp = of('large', 'pull');
  console.log(
    `on the 20 MB image, inspect against pull: time ${(median(li.ms) / median(lp.ms)).toFixed(2)}x, bytes 1/${Math.round(median(lp.bytes) / median(li.bytes))}`,
  );
  console.log(`a Node process that does nothing (node -e 0), the floor of every row: ${median(floor).toFixed(0)} ms`);
  console.log(
    `medians of ${ROUNDS} rounds, each a crab process (Node's start included); bytes are request and answer bodies through the relay`,
  );
} finally {
  await cleanup();
}
