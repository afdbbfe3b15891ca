// Runs a real bermd process for end-to-end tests: spawned on an ephemeral loopback port, and ready
// when it prints its listening line (the synchronisation point; nothing here sleeps).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BERMD_BIN = fileURLToPath(new URL('../bin/bermd.js', import.meta.url));

export interface RunningDaemon {
  url: string;
  port: number;
  stateDir: string;
  process: ChildProcess;
  /** Everything the daemon wrote on stderr (its structured log) so far. */
  stderr(): string;
  /** Lines of the log as objects. */
  log(): Record<string, unknown>[];
  /** Everything the daemon wrote on stdout so far. */
  stdout(): string;
  /** Resolves with the first log entry (already written or still to come) that `match` accepts. */
  waitForLog(match: (entry: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Sends `signal` and resolves with the exit code (or the killing signal's name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export interface StartOptions {
  stateDir?: string;
  /** The loopback port to listen on (a restarted daemon's, say); a free one by default. */
  port?: number;
  args?: string[];
  /** Variables added to the daemon's environment (this process's own). */
  env?: Record<string, string>;
  /** Options for node itself (V8's included), before bermd's script. */
  nodeArgs?: string[];
}

export async function tempDir(prefix = 'bermd-test-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function exited(child: ChildProcess): Promise<number | string> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  if (child.signalCode !== null) return Promise.resolve(child.signalCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
}

export async function startDaemon(options: StartOptions = {}): Promise<RunningDaemon> {
  const stateDir = options.stateDir ?? (await tempDir());
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), BERMD_BIN, '--listen', `127.0.0.1:${options.port ?? 0}`, '--state', stateDir, ...(options.args ?? [])],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...options.env },
    },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = '';
  let stdout = '';
  const logWaiters = new Set<() => void>();
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const check of [...logWaiters]) check();
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const parseLog = (): Record<string, unknown>[] =>
    stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  const url = await new Promise<string>((resolve, reject) => {
    const onData = (): void => {
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      const line = stdout.slice(0, newline);
      const m = /^bermd listening on (http:\/\/\S+) \(state: (.+)\)$/.exec(line);
      cleanup();
      if (m) resolve(m[1]!);
      else reject(new Error(`bermd printed ${JSON.stringify(line)} instead of its listening line`));
    };
    const onExit = (code: number | null, signal: string | null): void => {
      cleanup();
      reject(new Error(`bermd exited (${code ?? signal}) before listening:\n${stderr}`));
    };
    const cleanup = (): void => {
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });

  return {
    url,
    port: Number(new URL(url).port),
    stateDir,
    process: child,
    stderr: () => stderr,
    log: parseLog,
    stdout: () => stdout,
    waitForLog: (match) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const found = parseLog().find(match);
          if (found !== undefined) {
            logWaiters.delete(check);
            child.off('close', onExit);
            resolve(found);
          }
        };
        const onExit = (): void => {
          logWaiters.delete(check);
          reject(new Error(`bermd exited before logging what was awaited:\n${stderr}`));
        };
        logWaiters.add(check);
        child.once('close', onExit);
        check();
      }),
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      const done = exited(child);
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return done;
    },
  };
}
