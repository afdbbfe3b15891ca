// Runs the real command line (`node bin/crab ...` from the repository root) as a child process,
// with image and manifest files written to a temporary directory; and the fixtures that the
// formatter tests and the command tests both read.
import { execFile } from 'node:child_process';
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
