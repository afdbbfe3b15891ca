import type { Command } from '@oclif/core/command';
import type { Config } from '@oclif/core/config';
import type { Topic } from '@oclif/core/interfaces';

/** What oclif's Config holds for one set of plugins, as scripts/oclif-manifest.js writes it. */
export interface HelpView {
  /** Indices into `HelpTable.commands`: Config's `commands`, aliases' entries included. */
  commands: number[];
  commandPermutations: [string, string][];
  topics: Topic[];
  topicPermutations: [string, string][];
  plugins: Record<string, { state: string | null }>;
  /** How many hooks the plugins declare, by event. */
  hooks: Record<string, number>;
  flexibleTaxonomy: boolean;
  isSingleCommandCLI: boolean;
  /** What oclif prints off a terminal for help on a subject (its words, `''` the root), the name as `HelpTable.bin`. */
  texts?: Record<string, string>;
}

/** Where a subject's texts on a terminal are in oclif.help.bin: runs of widths, and each width's run and place. */
export interface TerminalTexts {
  /** Each run's brotli stream (its distinct texts, NUL-separated) as [offset, length] in the file. */
  runs: [number, number][];
  /** For each width from `from`, the text's place among its run's. */
  at: number[];
}

/**
 * oclif.help.json: what oclif's Config holds that its Help class and its reading of a command id read, with
 * the plugins package.json lists (`all`) and without them (`own`), and the root plugin's command ids and
 * topics, by which bin/run.js chooses between the two; and the help oclif's Help printed from each, with
 * `bin` standing for the program's name and `userAgent` for the root help's VERSION line: off a terminal at
 * `width` columns without colour, and on one in colour at each width from `terminal.from` to `terminal.to`,
 * in oclif.help.bin (absent when the names are of different lengths).
 */
export interface HelpTable {
  root: { commandIDs: string[]; topics: string[] };
  views: { own: HelpView; all: HelpView };
  commands: Command.Cached[];
  bin?: string;
  userAgent?: string;
  width?: number;
  terminal?: { from: number; to: number; run: number; index: { own: Record<string, TerminalTexts>; all: Record<string, TerminalTexts> } };
}

/** The package.json bin/run.js hands oclif, its `oclif.bin` the name typed. */
export interface PackageJson {
  name: string;
  version: string;
  description?: string;
  helpOptions?: object;
  oclif: {
    bin: string;
    binAliases?: string[];
    dirname?: string;
    topicSeparator?: string;
    hooks?: Record<string, string | string[]>;
    // What oclif would read and the fast path does not: any of them set leaves help to oclif.
    helpClass?: unknown;
    helpOptions?: object;
    additionalHelpFlags?: unknown;
    additionalVersionFlags?: unknown;
    theme?: unknown;
    state?: unknown;
    flexibleTaxonomy?: unknown;
  };
}

/** Signals what the help shown from the table cannot give as oclif's would (a command whose help loads its class). */
export class Declined extends Error {}

/** What oclif's Help and its reading of an id read of a Config, from the table (helpConfig). */
export type HelpConfig = Config & {
  findCommand(id: string): Command.Loadable | undefined;
  findTopic(name: string): Topic | undefined;
};

/**
 * A stand-in for oclif's Config made from the table: the commands, topics and their lookups as Config makes
 * them (a permutation looked up as Config looks it up), the names, the plugins' states. A command's class is
 * never loaded: Help loads one only for dynamic help, which is then oclif's (Declined).
 */
export function helpConfig(table: HelpTable, view: HelpView, pjson: PackageJson, userAgent: string): HelpConfig {
  const declined = async (): Promise<never> => {
    throw new Declined();
  };
  const commands = view.commands.map((i) => ({ ...table.commands[i]!, load: declined }));
  const byId = new Map(commands.map((c) => [c.id, c]));
  const commandPermutations = new Map(view.commandPermutations);
  const topics = view.topics.map((t) => ({ ...t }));
  const byName = new Map(topics.map((t) => [t.name, t]));
  const topicPermutations = new Map(view.topicPermutations);
  const plugins = new Map(
    Object.entries(view.plugins).map(([name, p]) => [name, { pjson: { oclif: p.state === null ? {} : { state: p.state } } }]),
  );
  const separator = pjson.oclif.topicSeparator;
  const config = {
    pjson,
    name: pjson.name,
    version: pjson.version,
    bin: pjson.oclif.bin || pjson.name,
    binAliases: pjson.oclif.binAliases,
    topicSeparator: separator === ' ' || separator === ':' ? separator : ':',
    userAgent,
    platform: process.platform,
    windows: false,
    theme: undefined,
    flexibleTaxonomy: false,
    isSingleCommandCLI: false,
    plugins,
    commands,
    // Config keeps the ids it read first; Help later rewrites the commands' ids it lists.
    commandIDs: commands.map((c) => c.id),
    topics,
    findCommand: (id: string) => byId.get(byId.has(id) ? id : (commandPermutations.get(id) ?? id)),
    findTopic: (name: string) => byName.get(byName.has(name) ? name : (topicPermutations.get(name) ?? name)),
  };
  return config as unknown as HelpConfig;
}

/**
 * The command id oclif's `run` reads from a line: its normalizeArgv, for the topic separators Config allows.
 * With a space, the words that continue a command id (or its start: a topic) are joined with `:`, then
 * the words after until a flag, a `name=value` or a command that takes arguments
 * (collateSpacedCmdIDFromArgs); a line of one word, or whose first word has a `:`, is that word. Read here
 * rather than with oclif's own, whose module costs most of what help printed from the table saves, and held
 * to it by test/help-fast-path.test.ts for slips of every command and the shapes around them.
 */
export function commandId(argv: readonly string[], config: HelpConfig): string | undefined {
  const [first] = argv;
  if (config.topicSeparator !== ' ' || argv.length <= 1 || first!.includes(':')) return first;
  const usable = new Set(config.commandIDs.flatMap((id) => id.split(':').map((_, i, words) => words.slice(0, i + 1).join(':'))));
  const joined = (words: readonly string[]): string => words.filter(Boolean).join(':');
  const taking = (id: string): boolean => {
    const command = id === '' ? undefined : config.findCommand(id);
    return command !== undefined && (command.strict === false || Object.keys(command.args ?? {}).length > 0);
  };
  const words: string[] = [];
  for (const word of argv) {
    if (usable.has(joined([...words, word]))) words.push(word);
    else if (word.includes('=') || word.startsWith('-') || taking(joined(words))) break;
    else words.push(word);
  }
  return joined(words) || first;
}
