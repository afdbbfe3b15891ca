import type { BermClient } from '@berm/client';
import { exitCodeFor } from './exit-codes.js';
import type { Credential } from './login/credential.js';

/** What a command's work is given, read from the command line by oclif or by the fast path alike. */
export interface Parsed<A = Record<string, string | undefined>, F = Record<string, unknown>> {
  args: A;
  flags: F;
  /** The positional words as typed, for a command that takes as many as it needs (`call`, `run`). */
  argv: string[];
}

/**
 * What a command's work takes from where it runs, built by the oclif command class (from `this`) or by
 * the fast path (bin/run.js) without oclif, so that each command's work is written once (src/actions/).
 */
export class CommandContext {
  /** The name typed: crab or berm. */
  readonly bin: string;
  /** The command's id as oclif writes it: `inspect`, `registry:login`. */
  readonly id: string;
  /** Whether the output is one JSON document (`--json`): human lines are then not written. */
  readonly json: boolean;
  /** Where the token of this command's requests to bermd came from, for what a 401 or 403 advises. */
  credential?: Credential;

  constructor(options: { bin: string; id: string; json: boolean }) {
    this.bin = options.bin;
    this.id = options.id;
    this.json = options.json;
  }

  /** How to ask for help on the command as it was typed: `crab inspect`, `berm registry login`. */
  get helpCommand(): string {
    return [this.bin, ...(this.id ? this.id.split(':') : [])].join(' ');
  }

  /** A line of the human view on stdout, as oclif's `this.log` writes it; nothing under `--json`. */
  log(message = ''): void {
    if (!this.json) console.log(message);
  }

  /**
   * Records the command's own negative answer (breaks found, deploy refused) by its stable
   * code. The result is still returned and printed; only the exit status changes, and since
   * it is `process.exitCode`, it holds whatever output comes after.
   */
  answerNegatively(code: string): void {
    process.exitCode = exitCodeFor(code);
  }

  /**
   * A client for bermd (`--url`, `--token`, else the stored login; see daemon.ts), loaded when a command
   * first needs it, so that commands which ask a daemon only now and then do not load the client.
   */
  async connect(flags: { url?: string; token?: string }): Promise<BermClient> {
    const { connect } = await import('./daemon.js');
    const { client, credential } = await connect(flags);
    this.credential = credential;
    return client;
  }

  /**
   * bermd's address and the bearer token to send it (`--url`, `--token`, else the stored login), for a
   * command that speaks to bermd other than through the client (`berm call`, over `/mcp`).
   */
  async bearer(flags: { url?: string; token?: string }): Promise<{ url: string; token?: string }> {
    const { DEFAULT_URL } = await import('@berm/client');
    const { credentialFor, tokenOf } = await import('./login/credential.js');
    const url = flags.url ?? DEFAULT_URL;
    this.credential = await credentialFor(url, flags.token);
    return { url, token: tokenOf(this.credential) };
  }
}
