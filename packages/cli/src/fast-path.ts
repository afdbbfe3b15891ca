/**
 * The one seam where `bin/run.js` answers a command line without loading oclif. Loading @oclif/core and its
 * config alone costs more than twice a bare `node -e 0` (bench/cli.js measures every command), more than
 * most commands' own work, and even its parser alone costs most of that; so a command line this reading is
 * sure of runs the command's work (src/actions/) straight away, and anything else goes through oclif.
 *
 * The reading (fast-path/read.ts) is driven by oclif.manifest.json, the command table the build writes: it
 * gives `{ id, args, flags, argv }` exactly as oclif's parser gives them to the command (defaults, BERM_URL
 * and the like when a flag is not given, `--flag=value` and `--flag value`, `-o value`, repeatable flags,
 * `--no-x` where allowed, the values of flags that parse their text, read by the same functions as the flags
 * themselves: fast-path/values.ts), and whether the output is JSON as oclif's `jsonEnabled()` says. It
 * declines anything it is not sure oclif reads the same way, which oclif then reads and answers as ever:
 * `--help`, `--`, an unknown or misspelt command or flag, combined or attached short flags, a value that
 * starts with `-` or is empty, a missing required argument or flag, a value outside a flag's options or
 * refused by its parse (oclif writes those errors), exclusive flags together, a word a repeatable flag
 * would swallow, `autocomplete` (a plugin's). `--version` is answered here with oclif's own line
 * (fast-path/version.ts).
 *
 * A line that runs no command is answered here too (fast-path/help.ts): help (`--help`, nothing, a topic
 * alone) with the text oclif's own Help class prints, rendered at build time into oclif.help.json and
 * oclif.help.bin for each width and colour the table holds, else that class run over the table in place of
 * oclif's Config; and a mistyped command with the did-you-mean crab's command_not_found hook gives.
 *
 * test/fast-path.test.ts holds the reading to oclif's own parser for every command and flag of the
 * manifest, and the near misses it declines, so a new command or flag, or an oclif upgrade that reads a
 * shape differently, fails there; test/help-fast-path.test.ts holds help and the did-you-mean to what oclif
 * prints for every command and topic, under both names, at several widths, in colour and on a terminal.
 */
import type { AnswerOptions } from './fast-path/help.js';
import type { CommandTable, Reading } from './fast-path/read.js';

export type { AnswerOptions } from './fast-path/help.js';
export type { HelpTable, PackageJson } from './fast-path/help-table.js';
export { namesOwnCommand } from './fast-path/plugins.js';
export type { CommandTable, Reading } from './fast-path/read.js';

/**
 * `argv` (what follows the program's name) read as oclif would read it, or undefined when the line is
 * oclif's to read. `table` gives oclif.manifest.json, read only when the line may be one to take; `bins`
 * are the program's names, the one typed first; `env` the environment.
 */
export async function readCommandLine(
  argv: readonly string[],
  table: () => CommandTable,
  { bins, env }: { bins: readonly string[]; env: Record<string, string | undefined> },
): Promise<Reading | undefined> {
  // Help, `--version` and `--` are oclif's: such a line pays nothing more here than this look.
  if (argv[0] === undefined || argv[0].startsWith('-') || argv.some((word) => word === '--help' || word === '--')) return undefined;
  const [{ commandOf, readArguments }, { COMMAND_IDS }, { valueReaders }] = await Promise.all([
    import('./fast-path/read.js'),
    import('./actions/index.js'),
    import('./fast-path/values.js'),
  ]);
  const named = commandOf(argv, table(), COMMAND_IDS);
  if (named === undefined) return undefined;
  return readArguments(named, { bins, env, readers: await valueReaders(named.command.id) });
}

/** What oclif prints for `--version`, or undefined where it is oclif's to say; see fast-path/version.ts. */
export async function versionLine(pjson: { name: string; version: string }): Promise<string | undefined> {
  const { versionLine: line } = await import('./fast-path/version.js');
  return line(pjson);
}

/** Runs what `readCommandLine` read, as the command's oclif class would; see fast-path/run.ts. */
export async function runReading(reading: Reading, bin: string): Promise<void> {
  const { runReading: run } = await import('./fast-path/run.js');
  await run(reading, bin);
}

/**
 * Answers a line that runs no command as oclif would: help (`--help`, nothing, a topic alone) printed by
 * oclif's own Help class over oclif.help.json, and a mistyped command's did-you-mean; false, having
 * written nothing, for anything else. See fast-path/help.ts.
 */
export async function answerWithoutCommand(argv: readonly string[], options: AnswerOptions): Promise<boolean> {
  const { answerWithoutCommand: answer } = await import('./fast-path/help.js');
  return answer(argv, options);
}
