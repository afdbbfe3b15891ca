import type { ValueReaders } from './values.js';

/** What oclif.manifest.json says of a flag, as far as the reading goes. */
export interface TableFlag {
  type: 'boolean' | 'option';
  char?: string;
  aliases?: string[];
  charAliases?: string[];
  multiple?: boolean;
  multipleNonGreedy?: boolean;
  delimiter?: string;
  allowStdin?: boolean | 'only';
  default?: unknown;
  options?: string[];
  required?: boolean;
  allowNo?: boolean;
  env?: string;
  exclusive?: string[];
  dependsOn?: string[];
  exactlyOne?: string[];
  relationships?: unknown[];
  combinable?: string[];
  deprecated?: unknown;
  deprecateAliases?: boolean;
}

/** What oclif.manifest.json says of an argument. */
export interface TableArg {
  required?: boolean;
  default?: unknown;
  options?: string[];
  multiple?: boolean;
}

/** What oclif.manifest.json says of a command. */
export interface TableCommand {
  id: string;
  strict?: boolean;
  enableJsonFlag?: boolean;
  aliases?: string[];
  state?: string;
  args: Record<string, TableArg>;
  flags: Record<string, TableFlag>;
}

/** oclif.manifest.json, as the build writes it (scripts/oclif-manifest.js). */
export interface CommandTable {
  commands: Record<string, TableCommand>;
}

/** A command line read: what oclif's parser gives the command, and whether its output is JSON. */
export interface Reading {
  id: string;
  args: Record<string, string>;
  flags: Record<string, unknown>;
  argv: string[];
  /** oclif's `jsonEnabled()`: `--json`, or `<BIN>_CONTENT_TYPE=json` in the environment. */
  json: boolean;
}

export interface ReadOptions {
  /** The program's names, the one typed first: oclif reads `<NAME>_CONTENT_TYPE` under each. */
  bins: readonly string[];
  env: Record<string, string | undefined>;
  /** The command's flags whose value is not their text (values.ts). */
  readers: ValueReaders;
}

/** The command a line names and the words after its name. */
export interface Named {
  command: TableCommand;
  rest: string[];
}

/** The flag setting on the command line, as oclif's parser records it. */
interface Token {
  name: string;
  value: string | boolean;
}

/** Signals a shape the reading is not sure oclif reads the same way: the line is left to oclif. */
class Declined extends Error {}

function decline(): never {
  throw new Declined();
}

/** The command among `runnable` that `argv` names, as oclif finds it, or undefined for anything else. */
export function commandOf(argv: readonly string[], table: CommandTable, runnable: ReadonlySet<string>): Named | undefined {
  const [first, second] = argv;
  // `registry:login`, an id as oclif writes it, oclif reads too; typed so, it is left to oclif.
  if (first === undefined || first.startsWith('-') || first.includes(':')) return undefined;
  // A topic's command (`registry login`) is two words, as oclif joins them with its space separator.
  const spaced = second === undefined ? undefined : table.commands[`${first}:${second}`];
  const command = spaced ?? table.commands[first];
  if (command === undefined || !runnable.has(command.id)) return undefined;
  if (command.state === 'deprecated' || (command.aliases ?? []).length > 0) return undefined;
  return { command, rest: argv.slice(spaced === undefined ? 1 : 2) };
}

/**
 * The words after a command's name read as oclif's parser reads them for it, or undefined for anything
 * this reading is not sure of (see fast-path.ts for what it declines).
 */
export function readArguments({ command, rest }: Named, options: ReadOptions): Reading | undefined {
  try {
    const { tokens, positionals } = readTokens(rest, command);
    const flags = flagValues(command, tokens, options);
    const { args, words } = argValues(command, positionals);
    // oclif orders argv by where each word first appears on the command line.
    words.sort((a, b) => rest.indexOf(a) - rest.indexOf(b));
    return { id: command.id, args, flags, argv: words, json: jsonEnabled(command, rest, options) };
  } catch (e) {
    if (e instanceof Declined) return undefined;
    throw e;
  }
}

/** The flag settings and the positional words, in oclif's order; anything doubtful declined. */
function readTokens(rest: readonly string[], command: TableCommand): { tokens: Token[]; positionals: string[] } {
  const tokens: Token[] = [];
  const positionals: string[] = [];
  // oclif's parser gives the words after a repeatable option flag to that flag, until another option flag.
  let current: TableFlag | undefined;
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (!word.startsWith('-')) {
      if (current?.multiple) decline();
      positionals.push(word);
      continue;
    }
    // `--`, `-`, a negative number, `-abc` (combined or attached short flags), `--help`: oclif's.
    if (word === '--' || word.length < 2) decline();
    const long = word.startsWith('--');
    if (!long && word.length !== 2) decline();
    const eq = long ? word.indexOf('=') : -1;
    const found = long ? longFlag(command, word.slice(2, eq === -1 ? undefined : eq)) : shortFlag(command, word[1]!);
    if (found === undefined) decline();
    const [name, flag, negated] = found;
    if (flag.deprecated !== undefined || flag.deprecateAliases) decline();
    if (flag.type === 'boolean') {
      // `--force=true` leaves `true` to oclif's parser as a word: not a shape to read.
      if (eq !== -1) decline();
      tokens.push({ name, value: !negated });
      continue;
    }
    if (flag.delimiter !== undefined || flag.allowStdin !== undefined || flag.multipleNonGreedy) decline();
    if (!flag.multiple && tokens.some((t) => t.name === name)) decline();
    const value = eq === -1 ? rest[++i] : word.slice(eq + 1);
    // A missing or empty value, or one that looks like a flag, is left to oclif to refuse or read.
    if (value === undefined || value === '' || value.startsWith('-')) decline();
    current = flag;
    tokens.push({ name, value });
  }
  return { tokens, positionals };
}

function longFlag(command: TableCommand, word: string): [string, TableFlag, boolean] | undefined {
  const byName = (name: string): [string, TableFlag] | undefined => {
    if (Object.hasOwn(command.flags, name)) return [name, command.flags[name]!];
    const aliased = Object.entries(command.flags).find(([, f]) => (f.aliases ?? []).includes(name));
    return aliased;
  };
  const named = byName(word);
  if (named !== undefined) return [...named, false];
  if (word.startsWith('no-')) {
    const negated = byName(word.slice(3));
    if (negated !== undefined && negated[1].type === 'boolean' && negated[1].allowNo) return [...negated, true];
  }
  return undefined;
}

function shortFlag(command: TableCommand, char: string): [string, TableFlag, boolean] | undefined {
  const found = Object.entries(command.flags).find(([, f]) => f.char === char || (f.charAliases ?? []).includes(char));
  return found === undefined ? undefined : [...found, false];
}

/** Every flag's value as oclif's parser gives it: set, else from its environment variable, else its default. */
function flagValues(command: TableCommand, tokens: readonly Token[], options: ReadOptions): Record<string, unknown> {
  const { readers } = options;
  const value = (name: string, flag: TableFlag, text: string): unknown => {
    if (flag.options !== undefined && !flag.options.includes(text)) decline();
    const reader = readers[name];
    if (reader === undefined) return text;
    try {
      return reader(text);
    } catch {
      // oclif refuses it, in its own words.
      return decline();
    }
  };
  const flags: Record<string, unknown> = {};
  const given = new Set<string>();
  for (const [name, flag] of Object.entries(command.flags)) {
    const set = tokens.filter((t) => t.name === name);
    const fromEnv = flag.env === undefined ? undefined : options.env[flag.env];
    let result: unknown;
    if (set.length > 0) {
      given.add(name);
      if (flag.type === 'boolean') result = set.at(-1)!.value;
      else if (flag.multiple) result = set.map((t) => value(name, flag, t.value as string));
      else result = value(name, flag, set.at(-1)!.value as string);
    } else if (fromEnv) {
      // oclif reads a boolean's variable by its own notion of truth: not a shape to read.
      if (flag.type === 'boolean' || flag.multiple) decline();
      given.add(name);
      result = value(name, flag, fromEnv);
    } else if (flag.default !== undefined) {
      result = flag.default;
    } else if (flag.type === 'boolean' && name !== 'json') {
      // The manifest leaves out a boolean's default: crab's are all false, but for oclif's own --json, which has none.
      result = false;
    }
    if (result !== undefined) flags[name] = result;
    else if (flag.required) decline();
  }
  for (const name of given) {
    const flag = command.flags[name]!;
    if ((flag.exclusive ?? []).some((other) => given.has(other))) decline();
    if (flag.dependsOn !== undefined || flag.exactlyOne !== undefined || flag.relationships !== undefined || flag.combinable !== undefined)
      decline();
  }
  return flags;
}

/** The arguments by name and the positional words oclif's parser gives the command. */
function argValues(command: TableCommand, positionals: readonly string[]): { args: Record<string, string>; words: string[] } {
  const entries = Object.entries(command.args);
  if (entries.some(([, arg]) => arg.multiple)) decline();
  if (command.strict !== false && positionals.length > entries.length) decline();
  const args: Record<string, string> = {};
  const words: string[] = [];
  entries.forEach(([name, arg], i) => {
    const text = positionals[i];
    if (text !== undefined) {
      if (arg.options !== undefined && !arg.options.includes(text)) decline();
      args[name] = text;
      words.push(text);
      return;
    }
    // A missing argument oclif refuses; a missing optional one is its default, since crab's never read
    // a piped stdin (`ignoreStdin`, which the manifest does not record: test/fast-path.test.ts checks it).
    if (arg.required) decline();
    if (typeof arg.default === 'string') {
      args[name] = arg.default;
      words.push(arg.default);
    } else if (arg.default !== undefined) decline();
  });
  words.push(...positionals.slice(entries.length));
  return { args, words };
}

/** oclif's `jsonEnabled()`, from the command line as read (no `--`) and the environment. */
function jsonEnabled(command: TableCommand, rest: readonly string[], options: ReadOptions): boolean {
  if (!command.enableJsonFlag) return false;
  const key = options.bins
    .map((bin) => `${bin.replaceAll('@', '').replaceAll(/[/-]/g, '_')}_CONTENT_TYPE`.toUpperCase())
    .find((k) => options.env[k]);
  if (key !== undefined && options.env[key]!.toLowerCase() === 'json') return true;
  return rest.includes('--json');
}
