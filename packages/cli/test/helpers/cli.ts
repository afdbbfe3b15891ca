// Runs the real command line (`node bin/crab ...` from the repository root) as a child process,
// with image and manifest files written to a temporary directory; and the fixtures that the
// formatter tests and the command tests both read.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Paint } from '@berm/cli';
import type { ToolSpec } from '@berm/manifest';

export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  bin?: 'crab' | 'berm';
  /** Variables to set, or (undefined) to remove, over a colour-neutral environment. */
  env?: Record<string, string | undefined>;
  /** The working directory; the repository root by default. */
  cwd?: string;
  /** Written to the command's standard input, which is then closed. */
  input?: string;
}

/**
 * A config directory no test writes to and none creates: commands run with it find no login stored, whatever
 * the user running the tests has stored in theirs. A test of stored logins gives its own XDG_CONFIG_HOME.
 */
export const NO_CONFIG = join(tmpdir(), `berm-test-no-config-${process.pid}`);

/** The environment with everything that decides colour, a daemon address or a stored login taken out. */
function neutralEnv(overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: NO_CONFIG };
  for (const name of [
    'FORCE_COLOR',
    'NO_COLOR',
    'TF_BUILD',
    'BERM_URL',
    'BERM_TOKEN',
    'CRAB_CONTENT_TYPE',
    'BERM_CONTENT_TYPE',
    'DEBUG',
    'NODE_ENV',
  ])
    delete env[name];
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return runCliBytes(args, options).then((r) => ({ code: r.code, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') }));
}

/** `runCli` with stdout and stderr as the bytes the process wrote. */
export function runCliBytes(args: string[], options: RunOptions = {}): Promise<{ code: number; stdout: Buffer; stderr: Buffer }> {
  const bin = join(repoRoot, 'bin', options.bin ?? 'crab');
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [bin, ...args],
      { cwd: options.cwd ?? repoRoot, env: neutralEnv(options.env ?? {}), encoding: 'buffer' },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** A command line left running (`crab dev`, `berm mcp`): its output as it comes, awaited line by line. */
export interface LiveCli {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Where each stream has got to: what `next` reads after. */
  mark(): { stdout: number; stderr: number };
  /**
   * Resolves with the first whole line of `stream` past `from` that `pattern` matches, already written or
   * still to come; rejects when the process ends first or `timeoutMs` passes, quoting what it wrote.
   */
  next(
    stream: 'stdout' | 'stderr',
    pattern: RegExp,
    from?: { stdout: number; stderr: number },
    timeoutMs?: number,
  ): Promise<RegExpExecArray>;
  /** Resolves with the exit code (or the killing signal's name) once the process has ended and its output is read. */
  exited: Promise<number | string>;
}

/** Starts the real command line and leaves it running; the caller ends it (a signal) and awaits `exited`. */
export function spawnCli(args: string[], options: RunOptions = {}): LiveCli {
  const bin = join(repoRoot, 'bin', options.bin ?? 'crab');
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: neutralEnv(options.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const text = { stdout: '', stderr: '' };
  const waiters = new Set<() => void>();
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream].setEncoding('utf8').on('data', (chunk: string) => {
      text[stream] += chunk;
      for (const check of [...waiters]) check();
    });
  }
  const exited = new Promise<number | string>((resolve) => {
    child.once('close', (code, signal) => {
      resolve(code ?? signal ?? -1);
      for (const check of [...waiters]) check();
    });
  });
  let ended = false;
  void exited.then(() => (ended = true));
  const quote = (): string => `stdout:\n${text.stdout}\nstderr:\n${text.stderr}`;
  return {
    process: child,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    mark: () => ({ stdout: text.stdout.length, stderr: text.stderr.length }),
    next: (stream, pattern, from = { stdout: 0, stderr: 0 }, timeoutMs = 120_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no line matching ${pattern} on ${stream} within ${timeoutMs} ms:\n${quote()}`));
        }, timeoutMs);
        const check = (): void => {
          const whole = text[stream].slice(from[stream], text[stream].lastIndexOf('\n') + 1);
          for (const line of whole.split('\n')) {
            const m = pattern.exec(line);
            if (m !== null) {
              clearTimeout(timer);
              waiters.delete(check);
              resolve(m);
              return;
            }
          }
          if (ended || child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(
              new Error(
                `the command ended (${child.exitCode ?? child.signalCode}) before a line matching ${pattern} on ${stream}:\n${quote()}`,
              ),
            );
          }
        };
        waiters.add(check);
        check();
      }),
    exited,
  };
}

/**
 * Every control character in `bytes` but line feed and tab, as `U+001B at 12`: C0 and DEL read byte by
 * byte, C1 as the characters UTF-8 encodes them as (bytes 0x80-0x9f also occur inside other characters).
 * Bytes that are not UTF-8 are reported too: a lone 0x9b is CSI to a terminal that is not in UTF-8.
 */
export function controlCharacters(bytes: Uint8Array): string[] {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return ['bytes that are not UTF-8'];
  }
  const found: string[] = [];
  for (const m of text.matchAll(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g)) {
    found.push(`U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} at ${m.index}`);
  }
  return found;
}

/** A temporary directory for one test file's fixtures. */
export class Scratch {
  private constructor(readonly dir: string) {}

  static async create(): Promise<Scratch> {
    return new Scratch(await mkdtemp(join(tmpdir(), 'berm-cli-')));
  }

  /** Writes `content` as `name` and returns its path. */
  async write(name: string, content: Uint8Array | string): Promise<string> {
    const path = join(this.dir, name);
    await writeFile(path, content);
    return path;
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The smallest module an image needs: nothing in it is compiled or run by these commands. */
export const MINIMAL_WAT = '(module (memory (export "memory") 1))';

export const ANSI = /\u001b\[[0-9;]*m/;

/** Marks each styled span, so tests can see what was styled without ANSI codes. */
export const tagged: Paint = {
  bold: (t) => `<b>${t}</b>`,
  dim: (t) => `<dim>${t}</dim>`,
  red: (t) => `<red>${t}</red>`,
  yellow: (t) => `<yellow>${t}</yellow>`,
  green: (t) => `<green>${t}</green>`,
  cyan: (t) => `<cyan>${t}</cyan>`,
};

/** A query tool whose signature has a required and an optional bounded argument and a titled result. */
export const FORECAST_TOOL: ToolSpec = {
  name: 'forecast',
  description: 'Forecasts the weather.',
  arguments: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 0 } }, required: ['city'] },
  returns: {
    type: 'object',
    title: 'Forecast',
    properties: { high: { type: 'number' }, low: { type: 'number' } },
    required: ['high', 'low'],
  },
  query: true,
};
