import { Command } from '@oclif/core/command';
import { CommandContext, type Parsed } from './context.js';
import { reportFailure, writeJson } from './report.js';

/**
 * What every command extends. A command's class declares its arguments and flags and hands what oclif
 * parsed to its work in src/actions/, which returns the result: oclif prints it for `--json`, and the
 * work prints its human view itself. The fast path (fast-path.ts) runs the same work without oclif.
 * Failures are reported here, in one place, as the fast path reports them (report.ts): one line on
 * stderr, or with `--json` one `{"error": {...}}` document on stdout, and the exit status from the table
 * in exit-codes.ts.
 */
export abstract class BaseCommand extends Command {
  static enableJsonFlag = true;

  /** What the command's work was given: the credential it used is read back from it for a failure. */
  private context?: CommandContext;

  /** Runs the command's work on what oclif parsed, with a context made from this command. */
  protected act<A, F, R>(
    parsed: { args: A; flags: F; argv: unknown[] },
    work: (parsed: Parsed<A, F>, context: CommandContext) => Promise<R>,
  ): Promise<R> {
    this.context = this.makeContext();
    return work({ args: parsed.args, flags: parsed.flags, argv: parsed.argv as string[] }, this.context);
  }

  private makeContext(): CommandContext {
    return new CommandContext({ bin: this.config.bin, id: this.id ?? '', json: this.jsonEnabled() });
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
    reportFailure(err, this.context ?? this.makeContext());
  }

  /** Plain JSON: oclif would colour it on a terminal, and stdout must stay one JSON document. */
  logJson(json: unknown): void {
    writeJson(json);
  }
}
