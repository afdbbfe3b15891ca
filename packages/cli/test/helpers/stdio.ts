// `berm mcp` as a client that starts local servers runs it: the README's stdio recipe (berm found on
// PATH, the daemon's address in BERM_URL), and a raw client of it that writes JSON-RPC lines to its stdin
// and reads its stdout a message at a time. Every wait is for a line or an exit, bounded by the test's
// own timeout; nothing here sleeps.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { exited } from '../../../bermd/test/daemon.js';
import { NO_CONFIG, repoRoot } from './cli.js';

/**
 * What the README's stdio recipe runs: `berm mcp`, with the daemon's address in BERM_URL. `berm` is found
 * on PATH, and the `node` its first line asks for is the one running the tests.
 */
export function recipe(url: string, env: Record<string, string> = {}): { command: string; args: string[]; env: Record<string, string> } {
  const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  delete inherited.BERM_TOKEN;
  return {
    command: 'berm',
    args: ['mcp'],
    env: {
      ...inherited,
      PATH: [join(repoRoot, 'bin'), dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
      BERM_URL: url,
      XDG_CONFIG_HOME: NO_CONFIG,
      ...env,
    },
  };
}

/** Lines `berm mcp` wrote on stderr, and a wait for the first that matches. */
export class StderrLines {
  readonly lines: string[] = [];
  private readonly waiters: Array<{ match: RegExp; resolve: (line: string) => void }> = [];

  feed(chunk: Buffer | string): void {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      this.lines.push(line);
      for (const w of [...this.waiters])
        if (w.match.test(line)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  }

  wait(match: RegExp): Promise<string> {
    const found = this.lines.find((l) => match.test(l));
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}

export type Message = Record<string, unknown>;

/** The 2025-11-25 handshake, as a client outside the SDK writes it. */
export function initialize(id: number | string = 1): Message {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  };
}

/** `berm mcp` spawned from the recipe, driven a line at a time. */
export class RawClient {
  readonly stderr = new StderrLines();
  /** Every message read from stdout, in order. */
  readonly messages: Message[] = [];
  /** stdout and stderr as the bytes the process wrote. */
  readonly stdoutBytes: Buffer[] = [];
  readonly stderrBytes: Buffer[] = [];
  /** The exit code (or signal name), once the process has exited and its output is read. */
  readonly exit: Promise<number | string>;
  private readonly waiters: Array<{ match: (m: Message) => boolean; resolve: (m: Message) => void }> = [];

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stderr.on('data', (c: Buffer) => {
      this.stderrBytes.push(c);
      this.stderr.feed(c);
    });
    child.stdout.on('data', (c: Buffer) => this.stdoutBytes.push(c));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as Message;
      this.messages.push(message);
      for (const w of [...this.waiters])
        if (w.match(message)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(message);
        }
    });
    this.exit = exited(child);
  }

  static start(url: string, env: Record<string, string> = {}): RawClient {
    const { command, args, env: full } = recipe(url, env);
    return new RawClient(spawn(command, args, { env: full, stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  /** Writes one line: a message as JSON, or a string as it is. */
  send(message: Message | string): void {
    this.child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  }

  /** The first message read (already, or still to come) that `match` accepts. */
  next(match: (m: Message) => boolean): Promise<Message> {
    const found = this.messages.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** The answer to request `id`. */
  answer(id: number | string): Promise<Message> {
    return this.next((m) => m.id === id && ('result' in m || 'error' in m));
  }

  /** Closes stdin, as a client that has gone does, and resolves with the exit code. */
  async end(): Promise<number | string> {
    this.child.stdin.end();
    return this.exit;
  }
}
