// Benchmark of `crab build` (not a test): how long the scaffold `crab new` writes takes to build, and
// what a call to a built AssemblyScript tool costs through the tool runtime, each against a baseline
// measured in the same run. Build first: npm run build. Run: node bench/build.js
//
//   RUNS          builds of the scaffold to time (default 5; the median is reported)
//   BENCH_ROUNDS  rounds of calls, best kept (default 3)
//   BENCH_CALLS   calls per round (default 4000)
//
// The build is timed twice: wall clock, and CPU time (what it costs a machine that runs nothing else).
// Baselines: for the build, the same compiler compiling a one-function AssemblyScript file with no
// json-as and no transform (`asc` alone: the floor any AssemblyScript build pays); for a call, the
// WAT echo of examples/echo-like guests (bench/lib/guests.js) through the same runtime.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Manifest } from '../packages/manifest/dist/index.js';
import { ToolRunner } from '../packages/bermd/dist/runtime/index.js';
import { ECHO_WAT, manifest, wat2wasm } from './lib/guests.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const crab = join(repo, 'bin', 'crab');
const RUNS = Number(process.env.RUNS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
const TARGET_MS = 5000;

function run(args, cwd = repo) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    execFile(process.execPath, args, { cwd, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${args.join(' ')}: ${stderr || error.message}`));
      else resolve({ ms: performance.now() - start, stdout });
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = await mkdtemp(join(tmpdir(), 'berm-bench-build-'));
try {
  // The build: the scaffold, as `crab new` writes it, built by `crab build` (a whole process each time).
  const project = join(dir, 'hello');
  await run([crab, 'new', 'hello', '--dir', project]);
  const floor = join(dir, 'floor');
  await mkdir(join(floor, 'assembly'), { recursive: true });
  await writeFile(join(floor, 'assembly', 'index.ts'), 'export function add(a: i32, b: i32): i32 { return a + b; }\n');
  const asc = join(repo, 'packages', 'guest', 'node_modules', 'assemblyscript', 'bin', 'asc.js');

  const builds = [];
  const floors = [];
  for (let i = 0; i < RUNS; i++) {
    floors.push((await run([asc, 'assembly/index.ts', '--outFile', 'build/floor.wasm'], floor)).ms);
    builds.push((await run([crab, 'build', project])).ms);
  }
  // The same command's CPU time (user + system, the shell's `time`): on a machine other work shares,
  // wall time says how busy the machine is as much as what a build costs; CPU time is what it costs.
  const cpu = [];
  for (let i = 0; i < RUNS; i++) {
    const timed = await new Promise((resolve, reject) => {
      execFile(
        'bash',
        ['-c', `TIMEFORMAT='%U %S'; time "${process.execPath}" "${crab}" build "${project}" > /dev/null`],
        { encoding: 'utf8' },
        (error, _stdout, stderr) => {
          if (error) reject(error);
          else resolve(stderr.trim().split('\n').at(-1));
        },
      );
    });
    const [user, system] = timed.split(' ').map(Number);
    cpu.push((user + system) * 1000);
  }
  const optimized = (await run([crab, 'build', project, '--optimize'])).ms;
  const optimizedSize = (await readFile(join(project, 'build', 'hello.wasm'))).length;
  await run([crab, 'build', project]);
  const image = await readFile(join(project, 'build', 'hello.wasm'));

  // The call: an AssemblyScript echo (json-as in and out) against the WAT echo, through the runtime.
  const echoProject = join(dir, 'asecho');
  await mkdir(join(echoProject, 'assembly'), { recursive: true });
  await writeFile(join(echoProject, 'package.json'), '{"name": "asecho", "version": "0.0.0"}\n');
  await writeFile(
    join(echoProject, 'assembly', 'index.ts'),
    '@json\nclass Text {\n  text: string = "";\n}\n\n/** Echoes its text. */\nexport function echo(args: Text): Text {\n  return args;\n}\n',
  );
  await run([crab, 'build', echoProject]);
  const asEcho = await readFile(join(echoProject, 'build', 'asecho.wasm'));

  const runner = new ToolRunner({ threads: 2 });
  runner.setHarness('wat', { module: await runner.compile(wat2wasm(ECHO_WAT)), manifest: manifest(['echo']), digest: 'sha256:wat' });
  runner.setHarness('as', { module: await runner.compile(asEcho), manifest: Manifest.fromImage(asEcho).data, digest: 'sha256:as' });
  runner.setHarness('hello', { module: await runner.compile(image), manifest: Manifest.fromImage(image).data, digest: 'sha256:hello' });
  for (const [harness, tool, args] of [
    ['wat', 'echo', { text: 'hello' }],
    ['as', 'echo', { text: 'hello' }],
    ['hello', 'hello', { name: 'Ada' }],
  ]) {
    const answer = await runner.call(harness, tool, args);
    if (!('ok' in answer)) throw new Error(`${harness}.${tool} answered ${JSON.stringify(answer)}`);
  }

  async function measure(label, concurrency, once) {
    let best = Infinity;
    for (let r = 0; r < ROUNDS; r++) {
      let next = 0;
      const start = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < CALLS) await once();
        }),
      );
      best = Math.min(best, ((performance.now() - start) * 1000) / CALLS);
    }
    return { label, us: best };
  }
  const rows = [];
  for (const concurrency of [1, 32]) {
    const wat = await measure(`WAT echo (baseline), ${concurrency} in flight`, concurrency, () =>
      runner.call('wat', 'echo', { text: 'hello' }),
    );
    const as = await measure(`AssemblyScript echo, ${concurrency} in flight`, concurrency, () =>
      runner.call('as', 'echo', { text: 'hello' }),
    );
    const hello = await measure(`scaffold hello (emits an event), ${concurrency} in flight`, concurrency, () =>
      runner.call('hello', 'hello', { name: 'Ada' }),
    );
    rows.push({ wat, as, hello });
  }
  await runner.close();

  const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`node ${process.version}, ${RUNS} builds (median), best of ${ROUNDS} rounds of ${CALLS} calls, 2 worker threads\n`);
  console.log(
    `crab build, scaffold:                ${s(median(builds))} (${builds.map(s).join(', ')}); target < ${s(TARGET_MS)}: ${median(builds) < TARGET_MS ? 'met' : 'missed'}`,
  );
  console.log(`crab build, scaffold, CPU time:      ${s(median(cpu))} (${cpu.map(s).join(', ')})`);
  console.log(`asc alone, one function (baseline):  ${s(median(floors))}`);
  console.log(`crab build / asc alone:              ${(median(builds) / median(floors)).toFixed(2)}x`);
  console.log(`crab build --optimize, scaffold:     ${s(optimized)} (${(optimized / median(builds)).toFixed(2)}x the default build)`);
  console.log(
    `image sizes: scaffold ${Math.round(image.length / 1024)} KiB (--optimize: ${Math.round(optimizedSize / 1024)} KiB), AssemblyScript echo ${Math.round(asEcho.length / 1024)} KiB\n`,
  );
  for (const { wat, as, hello } of rows) {
    for (const r of [wat, as, hello]) console.log(`${r.label.padEnd(52)} ${r.us.toFixed(1).padStart(8)} µs/call`);
    console.log(`AssemblyScript echo / WAT echo:                      ${(as.us / wat.us).toFixed(2)}x`);
    console.log(`scaffold hello / WAT echo:                           ${(hello.us / wat.us).toFixed(2)}x\n`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
