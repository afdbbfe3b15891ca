import type { CommandContext } from './context.js';
import { describeFailure, type Failure, usageFailure } from './failure.js';
import { jsonText, printable } from '@berm/format/printable';
import { explainRefusal } from './login/refusal.js';

/** What `--json` prints: one JSON document, uncoloured, on stdout, with no control character in it. */
export function writeJson(value: unknown): void {
  process.stdout.write(`${jsonText(value)}\n`);
}

/** Reports a failure: one line on stderr, or `{"error": {...}}` on stdout for `--json`; sets the exit status. */
export function writeFailure(failure: Failure, bin: string, json: boolean): void {
  process.exitCode = failure.exit;
  if (json) writeJson({ error: failure.json });
  // Messages quote file names and what the reader could not parse, which may hold escape sequences.
  else process.stderr.write(`${bin}: ${printable(failure.line)}\n`);
}

/** Reports what a command's work threw, with the advice its credential calls for (login/refusal.ts). */
export function reportFailure(err: unknown, context: CommandContext): void {
  writeFailure(describeFailure(explainRefusal(err, context.credential), context.helpCommand), context.bin, context.json);
}

/**
 * Reports a failure that no command caught (an unknown command, a broken install) the way
 * commands report theirs. `--json` counts as given when it comes before any `--`, as oclif reads it.
 */
export function reportUncaught(err: unknown, bin: string, argv: readonly string[]): void {
  writeFailure(describeFailure(err, bin), bin, jsonAsked(argv));
}

/** Reports a usage error with oclif's `message` as `reportUncaught` reports oclif's error carrying it. */
export function reportUsage(message: string, bin: string, argv: readonly string[]): void {
  writeFailure(usageFailure(message, bin), bin, jsonAsked(argv));
}

function jsonAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return argv.slice(0, end === -1 ? undefined : end).includes('--json');
}
