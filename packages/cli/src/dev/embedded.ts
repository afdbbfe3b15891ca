/**
 * The bermd `crab dev` starts when no daemon answers: the `bermd` package's own bin in a child process,
 * on a free loopback port, with a state directory of its own that is removed when it stops (what it
 * served is the project's last build, which the next `crab dev` deploys again).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printable } from '@berm/format/printable';
import { CliError } from '../failure.js';

/** How long bermd may take to print its listening line. */
const START_MS = 60_000;
/** How long a stopping bermd may drain before it is killed: a dev loop's calls are short. */
const STOP_MS = 10_000;
/** The lines of bermd's log kept, to say why it stopped when it stops on its own. */
const LOG_LINES = 20;

export interface EmbeddedDaemon {
  url: string;
  pid: number;
  stateDir: string;
  /** Resolves when the process has exited, for whatever reason, with what it last logged. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; log: string }>;
  /** SIGTERM, then SIGKILL after a bound; resolves once the process is gone and its state removed. */
  stop(): Promise<void>;
}

/** bermd's bin, beside the package's main module (`bermd` exports no path to it). */
function bermdBin(): string {
  return fileURLToPath(new URL('../bin/bermd.js', import.meta.resolve('bermd')));
}

export async function startEmbedded(): Promise<EmbeddedDaemon> {
  const stateDir = await mkdtemp(join(tmpdir(), 'berm-dev-'));
  const child = spawn(process.execPath, [bermdBin(), '--listen', '127.0.0.1:0', '--state', stateDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A crab that exits any other way (an uncaught error) takes its daemon with it.
  const orphaned = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', orphaned);
  const log: string[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    log.push(...chunk.split('\n').filter(Boolean));
    log.splice(0, Math.max(0, log.length - LOG_LINES));
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; log: string }>((done) => {
    child.once('close', (code, signal) => {
      process.off('exit', orphaned);
      done({ code, signal, log: log.join('\n') });
    });
  });
  let url: string;
  try {
    url = await listening(child, exited);
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    await rm(stateDir, { recursive: true, force: true });
    throw e;
  }
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_MS);
      await exited;
      clearTimeout(timer);
      await rm(stateDir, { recursive: true, force: true });
    })();
    return stopping;
  };
  return { url, pid: child.pid!, stateDir, exited, stop };
}

/** The address of bermd's listening line, its first line on stdout; a failure if it exits, says otherwise, or takes too long. */
function listening(
  child: ChildProcess,
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; log: string }>,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const fail = (why: string, log = ''): void => {
      clearTimeout(timer);
      reject(
        new CliError(
          'embedded-daemon-failed',
          `the embedded bermd ${why}${log ? `; it logged:\n${printable(log)}` : ''}\nstart bermd yourself and point --url or BERM_URL at it`,
        ),
      );
    };
    const timer = setTimeout(() => fail(`did not listen within ${START_MS / 1000}s`), START_MS);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.includes('\n')) return;
      stdout += chunk;
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      const m = /^bermd listening on (http:\/\/\S+) /.exec(stdout.slice(0, newline));
      if (m === null) return fail(`printed ${JSON.stringify(printable(stdout.slice(0, newline)))} instead of its listening line`);
      clearTimeout(timer);
      resolve(m[1]!);
    });
    void exited.then(({ code, signal, log }) => fail(`exited (${code ?? signal}) before it listened`, log));
  });
}
