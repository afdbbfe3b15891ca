#!/usr/bin/env node
// Start-up cost of every command of the command line against `node -e 0`, each the median of RUNS
// runs, interleaved (one run of every row, then the next round) so that load on the machine hits all
// alike. The commands that talk to a daemon talk to a real bermd started here on a loopback port,
// with the echo example deployed as `echo` over an earlier image (so `rollback` has somewhere to go).
// Registry commands would measure a registry's answer rather than a start, so they are timed with
// `--help`; `build` compiles for seconds, so it is timed with `--help` too.
// Two more rows say where the time goes for `inspect --json`: the same read done by a bare script
// calling @berm/manifest (the floor the CLI cannot go below), and the command taken through oclif
// (`--` keeps it off the fast path in bin/run.js).
// Help is timed as the fast path gives it off a terminal (the text oclif's Help printed at build time), at a
// width the build did not render off a terminal (oclif's Help run over its table), and through oclif.
// `berm mcp` is timed twice: to its exit with stdin closed, and to its answer to a client's `initialize`
// (through bermd, which opens the session), the figure a client waits on.
// A benchmark, not a test: it prints figures and ratios (target: every command at most 2.5x) and
// asserts nothing beyond each command's exit status, which says it did what it is timed doing.
//
//   RUNS=15 ONLY=ls,history node bench/cli.js
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeAgent, put, startBermd } from './lib/daemon.js';
import { ECHO_WAT, image as guestImage } from './lib/guests.js';

const RUNS = Number(process.env.RUNS ?? 15);
const ONLY = process.env.ONLY?.split(',');
const repo = fileURLToPath(new URL('..', import.meta.url));
const echo = 'examples/echo.wasm';
const TARGET = 2.5;

const libraryOnly = `
const { readManifestFile } = await import('@berm/manifest');
process.stdout.write(JSON.stringify((await readManifestFile(${JSON.stringify(echo)})).toJSON(), null, 2) + '\\n');
`;

// Nothing of the user's own logins or registry credentials is read or written.
const scratch = mkdtempSync(join(tmpdir(), 'berm-bench-cli-'));
const bermd = await startBermd();
await put(`${bermd.url}/harnesses/echo`, guestImage(ECHO_WAT, ['echo']));
await put(`${bermd.url}/harnesses/echo?force=true`, readFileSync(join(repo, echo)));
const env = {
  ...process.env,
  BERM_URL: bermd.url,
  XDG_CONFIG_HOME: join(scratch, 'config'),
  DOCKER_CONFIG: join(scratch, 'docker'),
  NO_COLOR: '1',
};
delete env.BERM_TOKEN;

let fresh = 0;
const crab = (...args) => ['bin/crab', ...args];
const berm = (...args) => ['bin/berm', ...args];

const initialize = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
})}\n`;

/** Each row: what is timed, and the exit status it must end with (a refusal is as much a start as an answer). */
const rows = [
  { name: 'node -e 0', args: () => ['-e', '0'] },
  { name: '@berm/manifest read alone', args: () => ['--input-type=module', '-e', libraryOnly] },
  { name: `crab inspect --json ${echo}`, args: () => crab('inspect', '--json', echo) },
  { name: '  the same through oclif', args: () => crab('inspect', '--json', '--', echo) },
  { name: `crab inspect ${echo}`, args: () => crab('inspect', echo) },
  { name: `crab breaks ${echo} ${echo}`, args: () => crab('breaks', echo, echo) },
  { name: `crab deploy echo ${echo} --dry-run`, args: () => crab('deploy', 'echo', echo, '--dry-run') },
  { name: 'berm ls', args: () => berm('ls') },
  { name: 'berm history echo', args: () => berm('history', 'echo') },
  { name: 'berm undeploy missing', args: () => berm('undeploy', 'missing'), status: 1 },
  { name: 'berm rollback echo --dry-run --force', args: () => berm('rollback', 'echo', '--dry-run', '--force') },
  { name: 'crab new NAME --dir TEMP', args: () => crab('new', 'tool', '--dir', join(scratch, `new-${fresh++}`)) },
  { name: `crab run ${echo} echo text=hi`, args: () => crab('run', echo, 'echo', 'text=hi') },
  { name: 'berm call echo.echo text=hi', args: () => berm('call', 'echo.echo', 'text=hi') },
  { name: 'berm mcp, stdin closed', args: () => berm('mcp') },
  { name: 'berm mcp, initialize answered', args: () => berm('mcp'), firstLine: initialize },
  { name: 'crab build --help', args: () => crab('build', '--help') },
  {
    name: "  build --help at OCLIF_COLUMNS=120 (oclif's Help over the table)",
    args: () => crab('build', '--help'),
    env: { OCLIF_COLUMNS: '120' },
  },
  { name: '  build --help through oclif', args: () => crab('build', '--help', '--') },
  { name: 'crab push --help', args: () => crab('push', '--help') },
  { name: 'crab pull --help', args: () => crab('pull', '--help') },
  { name: 'crab registry login --help', args: () => crab('registry', 'login', '--help') },
  { name: 'berm login --help', args: () => berm('login', '--help') },
  { name: 'crab --help', args: () => crab('--help') },
  { name: 'crab --version', args: () => crab('--version') },
  { name: 'crab inspct (did you mean)', args: () => crab('inspct'), status: 2 },
  { name: '  registry lgin (did you mean after a topic)', args: () => crab('registry', 'lgin'), status: 2 },
].filter((row, r) => r === 0 || ONLY === undefined || ONLY.some((word) => row.name.includes(word)));

/**
 * The time from the start of `node ARGS` to the first line it writes on stdout, given `row.firstLine` on
 * stdin; then stdin is closed and the process must exit 0 (bounded: a relay that hangs fails the run).
 */
function timeToAnswer(row) {
  const args = row.args();
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { cwd: repo, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.write(row.firstLine);
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk) => (err += chunk));
  return new Promise((resolve, reject) => {
    let ms;
    const bound = setTimeout(() => {
      child.kill();
      reject(new Error(`node ${args.join(' ')} did not answer and exit within 30 s: ${err}${out}`));
    }, 30_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (ms === undefined && out.includes('\n')) {
        ms = Number(process.hrtime.bigint() - start) / 1e6;
        child.stdin.end();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(bound);
      if (code === 0 && ms !== undefined && !out.includes('"error"')) resolve(ms);
      else reject(new Error(`node ${args.join(' ')} exited ${code} after answering ${out}: ${err}`));
    });
  });
}

async function time(row) {
  if (row.firstLine !== undefined) return timeToAnswer(row);
  const args = row.args();
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: repo, env: { ...env, ...row.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== (row.status ?? 0)) {
    throw new Error(`node ${args.join(' ')} exited ${result.status}, not ${row.status ?? 0}: ${result.stderr}${result.stdout}`);
  }
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

try {
  // One untimed run of each warms the filesystem cache.
  for (const row of rows) await time(row);
  const samples = rows.map(() => []);
  for (let i = 0; i < RUNS; i++) for (const [r, row] of rows.entries()) samples[r].push(await time(row));

  const medians = samples.map(median);
  const width = Math.max(...rows.map((row) => row.name.length));
  const over = [];
  rows.forEach((row, r) => {
    const ratio = medians[r] / medians[0];
    if (r > 1 && !row.name.startsWith(' ') && ratio > TARGET) over.push(row.name);
    const shown = r === 0 ? '' : `  ${ratio.toFixed(2)}x`;
    console.log(`${row.name.padEnd(width)}  median ${medians[r].toFixed(1).padStart(6)} ms${shown}`);
  });
  console.log(`over ${RUNS} runs each; target: every command at most ${TARGET}x node -e 0`);
  console.log(over.length === 0 ? 'every command within the target' : `over the target: ${over.join('; ')}`);
} finally {
  await bermd.stop();
  closeAgent();
  rmSync(scratch, { recursive: true, force: true });
}
