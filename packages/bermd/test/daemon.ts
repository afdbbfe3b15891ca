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
  /** The state directory; empty with a `store`. */
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
  /** A PostgreSQL URL: the daemon keeps its set there (`--store`) instead of in a state directory. */
  store?: string;
  /** The loopback port to listen on (a restarted daemon's, say); a free one by default. */
  port?: number;
  args?: string[];
  /** Variables added to the daemon's environment (this process's own). */
  env?: Record<string, string>;
  /** bermd's whole command line, in place of the listening address, the store and `args` (a refused start, a subcommand). */
  command?: string[];
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

/**
 * Resolves with the exit code (or the killing signal's name) once the process has exited and its
 * stdout and stderr are read to their end: Node may emit 'exit' before the last of what the process
 * wrote has been read, so what it said just before exiting is awaited through 'close'.
 */
export function exited(child: ChildProcess): Promise<number | string> {
  const outcome = (): number | string => child.exitCode ?? child.signalCode ?? -1;
  const ended = child.exitCode !== null || child.signalCode !== null;
  // 'close' waits for the process's output streams (stdin is not one of them).
  if (ended && child.stdio.slice(1).every((stream) => stream == null || stream.closed)) return Promise.resolve(outcome());
  return new Promise((resolve) => child.once('close', () => resolve(outcome())));
}

/** A bermd process not yet known to listen: its log can be awaited while it starts (it may wait for its store). */
export type LaunchedDaemon = Omit<RunningDaemon, 'url' | 'port'> & {
  /** Resolves with the running daemon once it prints its listening line; rejects if it exits first. */
  listening: Promise<RunningDaemon>;
};

export async function startDaemon(options: StartOptions = {}): Promise<RunningDaemon> {
  return (await launchDaemon(options)).listening;
}

export async function launchDaemon(options: StartOptions = {}): Promise<LaunchedDaemon> {
  const stateDir = options.stateDir ?? (options.store === undefined && options.command === undefined ? await tempDir() : '');
  const where = options.store === undefined ? ['--state', stateDir] : ['--store', options.store];
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      BERMD_BIN,
      ...(options.command ?? ['--listen', `127.0.0.1:${options.port ?? 0}`, ...where, ...(options.args ?? [])]),
    ],
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
  // Whole lines only: a read can end inside a line the daemon is still writing (one longer than a
  // pipe writes at once), and that line is parsed once its end has arrived.
  const parseLog = (): Record<string, unknown>[] =>
    stderr
      .slice(0, stderr.lastIndexOf('\n') + 1)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  const launched: Omit<LaunchedDaemon, 'listening'> = {
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

  const listening = new Promise<RunningDaemon>((resolve, reject) => {
    const onData = (): void => {
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      const line = stdout.slice(0, newline);
      const m = /^bermd listening on (http:\/\/\S+) \((state|store): (.+)\)$/.exec(line);
      cleanup();
      if (m) resolve({ ...launched, url: m[1]!, port: Number(new URL(m[1]!).port) });
      else reject(new Error(`bermd printed ${JSON.stringify(line)} instead of its listening line`));
    };
    const onExit = (code: number | null, signal: string | null): void => {
      cleanup();
      reject(new Error(`bermd exited (${code ?? signal}) before listening:\n${stderr}`));
    };
    const cleanup = (): void => {
      child.stdout!.off('data', onData);
      child.off('close', onExit);
    };
    child.stdout!.on('data', onData);
    // 'close', not 'exit': the rejection quotes everything the process wrote on stderr before it exited.
    child.once('close', onExit);
  });
  // A launch whose listening nobody awaits (it is meant to fail) must not be an unhandled rejection.
  listening.catch(() => {});
  return { ...launched, listening };
}
