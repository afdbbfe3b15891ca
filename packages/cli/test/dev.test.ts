// crab dev as a user runs it, from a clean directory: `crab new`, then `crab dev` left running while
// the test edits the project and awaits what it prints (every wait bounded; none is a sleep). With its
// own bermd: a field added to a result is deployed (nothing breaks), a compile error is shown located
// and leaves the deployed image served, the fix is deployed, a required argument added to a tool a
// caller used is the gate's refusal with nothing deployed, and SIGINT stops the loop and the bermd it
// started, port and process. Against a bermd already running (--url): it deploys there and leaves it running.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { connect as connectSocket } from 'node:net';
import { join } from 'node:path';
import { BermClient } from '@berm/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import { runCli, Scratch, spawnCli, type LiveCli } from './helpers/cli.js';

/** Each scenario runs a few builds (seconds each, more on a machine running other test files). */
const SCENARIO = 600_000;
/** A bound on one build and deploy, for a line awaited after an edit. */
const ROUND = 180_000;

let scratch: Scratch;
const running = new Set<LiveCli>();

beforeAll(async () => {
  scratch = await Scratch.create();
});

afterAll(async () => {
  for (const dev of running) {
    dev.process.kill('SIGKILL');
    await dev.exited;
  }
  await scratch?.remove();
});

/** `crab new NAME` in the scratch directory, as a user types it there; the project's directory. */
async function newProject(name: string): Promise<string> {
  const created = await runCli(['new', name], { cwd: scratch.dir });
  expect(created.code).toBe(0);
  return join(scratch.dir, name);
}

/** Rewrites one file of the project, as an editor's save does, after checking the text it replaces is there. */
async function edit(file: string, from: string, to: string): Promise<string> {
  const source = await readFile(file, 'utf8');
  expect(source).toContain(from);
  const next = source.replace(from, to);
  await writeFile(file, next);
  return next;
}

function refused(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connectSocket({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw e;
  }
}

describe('crab dev with its own bermd', () => {
  it(
    'deploys each save that builds and passes the gate, shows the rest, and leaves nothing behind on SIGINT',
    async () => {
      const project = await newProject('hello');
      const index = join(project, 'assembly', 'index.ts');
      const dev = spawnCli(['dev', '--embedded'], { cwd: project });
      running.add(dev);

      const [, pid, url, stateDir] = await dev.next(
        'stdout',
        /^bermd: embedded, pid (\d+), listening on (http:\/\/127\.0\.0\.1:\d+) \(state: (.+), removed when crab dev stops\)$/,
      );
      const port = Number(new URL(url!).port);
      const client = new BermClient(url!);
      try {
        await dev.next('stdout', /^gate: passes: nothing breaks$/, undefined, ROUND);
        expect(dev.stdout()).toContain('tools: new: hello\n');
        const first = await client.get('hello');
        expect(first.manifest.tools.map((t) => t.name)).toEqual(['hello']);

        // A field added to the tool's result: compatible, deployed.
        let mark = dev.mark();
        await edit(index, '  length: u32 = 0;\n', '  length: u32 = 0;\n  /** Whether it shouts. */\n  loud: bool = false;\n');
        await dev.next('stdout', /^gate: passes: nothing breaks$/, mark, ROUND);
        let said = dev.stdout().slice(mark.stdout);
        expect(said).toContain('changed: assembly/index.ts\n');
        expect(said).toContain('tools: changed hello (compatible)\n');
        expect(said).toMatch(/^replaced hello 0\.1\.0 \(/m);
        const widened = await client.get('hello');
        expect(widened.digest).not.toBe(first.digest);
        expect(widened.manifest.tools[0]!.returns).toMatchObject({ properties: { loud: { type: 'boolean' } } });

        // A compile error: shown located in the source, nothing deployed, the last image still served.
        mark = dev.mark();
        const broken = await edit(index, 'greeting.message = "Hello, "', 'greeting.message = helloo');
        const lines = broken.split('\n');
        const line = lines.findIndex((l) => l.includes('helloo')) + 1;
        const column = lines[line - 1]!.indexOf('helloo') + 1;
        await dev.next('stderr', /^not deployed: .*did not build: 1 error; what was served is still served$/, mark, ROUND);
        const errors = dev.stderr().slice(mark.stderr);
        expect(errors).toContain("ERROR TS2304: Cannot find name 'helloo'.");
        expect(errors).toContain(`└─ in assembly/index.ts(${line},${column})`);
        expect(dev.stdout().slice(mark.stdout)).not.toMatch(/^(deployed|replaced) /m);
        expect((await client.get('hello')).digest).toBe(widened.digest);

        // Fixed: deployed.
        mark = dev.mark();
        await edit(index, 'greeting.message = helloo', 'greeting.message = "Hi, "');
        await dev.next('stdout', /^gate: passes: nothing breaks$/, mark, ROUND);
        const fixed = await client.get('hello');
        expect(fixed.digest).not.toBe(widened.digest);
        const called = await runCli(['call', 'hello', 'hello', 'name=Ada', '--url', url!, '--json'], { bin: 'berm' });
        expect(called.code).toBe(0);
        expect(JSON.parse(called.stdout).result).toEqual({ message: 'Hi, Ada!', length: 8, loud: false });

        // A required argument added to a tool a caller has used: the gate refuses, nothing is deployed.
        mark = dev.mark();
        await edit(index, '  name!: string;\n', '  name!: string;\n  /** How the greeting should feel. */\n  mood!: string;\n');
        await dev.next(
          'stderr',
          /^not deployed: 1 break of tools or events callers used in the last 30 days; hello still serves/,
          mark,
          ROUND,
        );
        said = dev.stdout().slice(mark.stdout);
        expect(said).toContain('tools: changed hello (1 break)\n');
        expect(said).toContain('refused: callers used these in the last 30 days:\n');
        expect(said).toMatch(/argument-newly-required +argument `mood` of tool `hello` is now required/);
        const after = await client.get('hello');
        expect(after.digest).toBe(fixed.digest);
        expect(after.manifest.tools[0]!.arguments).not.toMatchObject({ properties: { mood: {} } });
      } finally {
        await client.close();
      }

      // SIGINT: the loop stops, and so does its bermd: the port refuses, the process is gone, its state removed.
      dev.process.kill('SIGINT');
      expect(await dev.exited).toBe(0);
      running.delete(dev);
      expect(dev.stdout()).toMatch(/stopping \(SIGINT\)\nstopped\n$/);
      expect(await refused(port)).toBe('ECONNREFUSED');
      expect(alive(Number(pid))).toBe(false);
      await expect(stat(stateDir!)).rejects.toThrow(/ENOENT/);
    },
    SCENARIO,
  );
});

describe('crab dev against a bermd already running', () => {
  let daemon: RunningDaemon;

  beforeAll(async () => {
    daemon = await startDaemon();
  });

  afterAll(async () => {
    await daemon?.stop();
    if (daemon) await removeDir(daemon.stateDir);
  });

  it(
    'deploys to it under the package name, starts no bermd of its own, and leaves it running on SIGTERM',
    async () => {
      const project = await newProject('greeter');
      const dev = spawnCli(['dev', '--url', daemon.url], { cwd: project });
      running.add(dev);
      await dev.next('stdout', /^gate: passes: nothing breaks$/, undefined, ROUND);
      expect(dev.stdout().split('\n')[0]).toBe(`bermd: ${daemon.url}`);
      expect(dev.stdout()).not.toContain('embedded');
      const client = new BermClient(daemon.url);
      try {
        expect((await client.get('greeter')).manifest.tools.map((t) => t.name)).toEqual(['hello']);
      } finally {
        await client.close();
      }

      dev.process.kill('SIGTERM');
      expect(await dev.exited).toBe(0);
      running.delete(dev);
      expect(daemon.process.exitCode).toBeNull();
      expect(daemon.process.signalCode).toBeNull();
      const health = await fetch(`${daemon.url}/healthz`);
      expect(health.status).toBe(200);
    },
    SCENARIO,
  );
});
