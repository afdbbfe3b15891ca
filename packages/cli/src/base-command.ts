import { Command } from '@oclif/core/command';
import type { BermClient } from '@berm/client';
import { exitCodeFor } from './exit-codes.js';
import { describeFailure } from './failure.js';
import type { Credential } from './login/credential.js';
import { explainRefusal } from './login/refusal.js';
import { writeFailure, writeJson } from './report.js';

/**
 * What every command extends. Commands return their result from `run()`: oclif prints it
 * for `--json`, and the command prints its human view itself. Failures are reported here,
 * in one place: one line on stderr, or with `--json` one `{"error": {...}}` document on
 * stdout, and the exit status from the table in exit-codes.ts.
 */
export abstract class BaseCommand extends Command {
  static enableJsonFlag = true;

  /** Where the token of this command's requests to bermd came from, for what a 401 or 403 advises. */
  private credential?: Credential;

  /**
   * Records the command's own negative answer (breaks found, deploy refused) by its stable
   * code. The result is still returned and printed; only the exit status changes, and since
   * it is `process.exitCode`, it holds whatever output comes after.
   */
  protected answerNegatively(code: string): void {
    process.exitCode = exitCodeFor(code);
  }

  /**
   * A client for bermd (`--url`, `--token`, else the stored login; see daemon.ts), loaded when a command
   * first needs it, so that commands which ask a daemon only now and then do not load the client.
   */
  protected async connect(flags: { url?: string; token?: string }): Promise<BermClient> {
    const { connect } = await import('./daemon.js');
    const { client, credential } = await connect(flags);
    this.credential = credential;
    return client;
  }

  /**
   * bermd's address and the bearer token to send it (`--url`, `--token`, else the stored login), for a
   * command that speaks to bermd other than through the client (`berm call`, over `/mcp`).
   */
  protected async bearer(flags: { url?: string; token?: string }): Promise<{ url: string; token?: string }> {
    const { DEFAULT_URL } = await import('@berm/client');
    const { credentialFor, tokenOf } = await import('./login/credential.js');
    const url = flags.url ?? DEFAULT_URL;
    this.credential = await credentialFor(url, flags.token);
    return { url, token: tokenOf(this.credential) };
  }

  /** How to ask for help on the command as it was typed: `crab inspect`, `berm breaks`. */
  protected get helpCommand(): string {
    return [this.config.bin, ...(this.id ? this.id.split(':') : [])].join(' ');
  }

  async catch(err: Error): Promise<void> {
    // `this.exit(n)` (oclif's ExitError) has already chosen its status and has nothing to say.
    if ((err as { code?: unknown }).code === 'EEXIT') {
      process.exitCode = (err as { oclif?: { exit?: number } }).oclif?.exit ?? 0;
      return;
    }
    // A command whose arguments failed to parse did call `parse`: without this, oclif (under
    // NODE_ENV=development or test) warns on stderr that it never did.
    this.parsed = true;
    writeFailure(describeFailure(explainRefusal(err, this.credential), this.helpCommand), this.config.bin, this.jsonEnabled());
  }

  /** Plain JSON: oclif would colour it on a terminal, and stdout must stay one JSON document. */
  logJson(json: unknown): void {
    writeJson(json);
  }
}
