import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { commandId, type HelpConfig, type HelpTable, helpConfig, type PackageJson, type TerminalTexts } from './help-table.js';
import { namesOwnCommand } from './plugins.js';
import { versionLine } from './version.js';

export interface AnswerOptions {
  pjson: PackageJson;
  env: Record<string, string | undefined>;
  /** oclif.help.json, or undefined when the build wrote none. */
  table: () => HelpTable | undefined;
}

/** The hook package.json names for `command_not_found`, whose message not-found.ts makes. */
const NOT_FOUND_HOOK = './dist/hooks/command-not-found.js';

/**
 * Answers, as oclif's `run` would, a command line that runs no command: help (`--help`, nothing at all, a
 * topic alone) and a mistyped command's usage error with its did-you-mean. Returns false, having written
 * nothing, for anything else and for what it is not sure of, which oclif then answers.
 *
 * Help is oclif's own Help class's text, in one of two ways. For a subject typed as its words, at a width
 * and colour the build rendered (off a terminal: 80 columns, no colour; on one: colour, 40 to 200 columns),
 * it is the text that class printed at build time (oclif.help.json, oclif.help.bin), the program's name
 * and the VERSION line put in. Anywhere else (another width or colour, other words on the line) it is that
 * class run here over the table in place of oclif's Config, which costs part of what oclif's start does.
 * A mistyped command's id is read as oclif's normalizeArgv reads it (help-table.ts).
 */
export async function answerWithoutCommand(argv: readonly string[], options: AnswerOptions): Promise<boolean> {
  const { pjson, env } = options;
  const o = pjson.oclif;
  // `--` changes what oclif reads as the help's subject and the command's id: left to oclif.
  if (argv.includes('--') || argv[0] === '--version') return false;
  if (o.helpClass !== undefined || o.additionalHelpFlags !== undefined || o.additionalVersionFlags !== undefined) return false;
  if (o.theme !== undefined || o.state !== undefined || o.flexibleTaxonomy) return false;
  // Windows changes the config directory's name and the examples' line continuation: oclif's to say.
  if (process.platform === 'win32') return false;
  const table = options.table();
  if (table === undefined) return false;
  const name = namesOwnCommand(argv, table.root) ? 'own' : 'all';
  const view = table.views[name];
  if (view.flexibleTaxonomy || view.isSingleCommandCLI || view.hooks.init || view.hooks.finally) return false;
  // The root help's VERSION line is oclif's userAgent, which versionLine leaves to oclif where it may differ.
  const userAgent = versionLine(pjson);
  if (userAgent === undefined || themeFileMayApply(pjson, env)) return false;
  const config = helpConfig(table, view, pjson, userAgent);

  const asked = argv.length === 0 || argv.includes('--help');
  if (!asked) {
    // What oclif's `run` does with a line without help: the command its id names, else that topic's help,
    // else the `command_not_found` hook.
    const id = commandId(argv, config) ?? '';
    if (config.findCommand(id) !== undefined) return false;
    if (config.findTopic(id) !== undefined) return showHelp([id], table, name, config, env);
    if (view.hooks.command_not_found !== 1 || o.hooks?.command_not_found !== NOT_FOUND_HOOK) return false;
    const [{ notFoundMessage }, { reportUsage }] = await Promise.all([import('../not-found.js'), import('../report.js')]);
    reportUsage(notFoundMessage(id, config.commands, config.topicSeparator), o.bin, argv);
    return true;
  }
  return showHelp(argv, table, name, config, env);
}

/** Prints oclif's help for `argv` (its `--help` words included) as `run` prints it; false where oclif's Help refuses. */
async function showHelp(
  argv: readonly string[],
  table: HelpTable,
  view: 'own' | 'all',
  config: HelpConfig,
  env: Record<string, string | undefined>,
): Promise<boolean> {
  const text = builtText(argv, table, view, config, env);
  if (text !== undefined) {
    process.stdout.write(text);
    return true;
  }
  const { Help } = await import('@oclif/core/help');
  let wrote = false;
  class Shown extends Help {
    override log(...args: string[]): void {
      wrote = true;
      super.log(...args);
    }
  }
  try {
    await new Shown(config, config.pjson.oclif.helpOptions ?? config.pjson.helpOptions).showHelp([...argv]);
  } catch (e) {
    // Help refuses a subject it finds no command or topic for (oclif's error), or one with dynamic help
    // (Declined), before it writes: oclif then says it, in its words.
    if (!wrote) return false;
    throw e;
  }
  return true;
}

/**
 * The text the build rendered for `argv`'s help, where oclif would print that one: for a subject typed as
 * its words (`registry login --help`), with the help options the build had (none), at the width and
 * colour it was rendered at; with the program's name and the userAgent put in.
 */
function builtText(
  argv: readonly string[],
  table: HelpTable,
  view: 'own' | 'all',
  config: HelpConfig,
  env: Record<string, string | undefined>,
): string | undefined {
  const words = argv.filter((w) => w !== '--help');
  const { bin, userAgent, terminal } = table;
  if (bin === undefined || userAgent === undefined || !words.every((w) => /^[a-z0-9][a-z0-9-]*$/.test(w))) return undefined;
  if ((config.pjson.oclif.helpOptions ?? config.pjson.helpOptions) !== undefined) return undefined;
  const shown = layout(env);
  if (shown === undefined) return undefined;
  const subject = words.join(' ');
  let text: string | undefined;
  if (!shown.colour && shown.width === table.width) text = table.views[view].texts?.[subject];
  else if (shown.colour && terminal !== undefined && shown.width >= terminal.from && shown.width <= terminal.to) {
    const texts = terminal.index[view][subject];
    if (texts !== undefined) text = terminalText(texts, shown.width - terminal.from, terminal.run);
  }
  if (text === undefined) return undefined;
  // The VERSION line was rendered unwrapped; a userAgent longer than the line would wrap.
  if (text.includes(userAgent) && config.userAgent.length > shown.width - 2) return undefined;
  return text.replaceAll(bin, config.bin).replace(userAgent, config.userAgent);
}

/** The text for the width `i` places past the first, from its run in oclif.help.bin. */
function terminalText({ runs, at }: TerminalTexts, i: number, run: number): string | undefined {
  const [offset, length] = runs[Math.floor(i / run)]!;
  const chunk = Buffer.alloc(length);
  const fd = openSync(new URL('../../oclif.help.bin', import.meta.url), 'r');
  try {
    if (readSync(fd, chunk, 0, length, offset) !== length) return undefined;
  } finally {
    closeSync(fd);
  }
  return brotliDecompressSync(chunk).toString('utf8').split('\0')[at[i]!];
}

/**
 * The width and colour oclif's help would have: the width oclif's screen module gives stdout (OCLIF_COLUMNS,
 * else a terminal's columns, at least 40, else 80), and colour where oclif's theme module gives it, asked of
 * supports-color and ansis as oclif loads them (off a terminal, none, unless FORCE_COLOR or a `--color` flag
 * says otherwise: then undefined, as when they cannot be asked).
 */
function layout(env: Record<string, string | undefined>): { width: number; colour: boolean } | undefined {
  const settings = (globalThis as { oclif?: { columns?: number } }).oclif;
  const columns = Number.parseInt(env.OCLIF_COLUMNS ?? '', 10) || settings?.columns;
  const stdout = process.stdout;
  if (!stdout.isTTY) {
    if ('FORCE_COLOR' in env || process.argv.some((word) => /^--(no-)?colou?rs?(=|$)/.test(word))) return undefined;
    return { width: columns || 80, colour: false };
  }
  const [cols = 0] = stdout.getWindowSize();
  const width = columns || (cols < 1 ? 80 : Math.max(cols, 40));
  try {
    const oclif = createRequire(createRequire(import.meta.url).resolve('@oclif/core/package.json'));
    const { supportsColor } = oclif('./lib/ux/supports-color.js') as { supportsColor: () => boolean };
    const ansis = oclif('ansis') as { isSupported: () => boolean };
    return { width, colour: supportsColor() && ansis.isSupported() };
  } catch {
    return undefined;
  }
}

/**
 * Whether oclif's Config would read a theme from the user's config directory (`theme.json` there), which
 * colours the help: the help is then oclif's to print. The directory is found as Config finds it.
 */
function themeFileMayApply(pjson: PackageJson, env: Record<string, string | undefined>): boolean {
  const bins = [pjson.oclif.bin || pjson.name, ...(pjson.oclif.binAliases ?? [])];
  const scoped = (key: string): string | undefined => {
    const name = bins.map((b) => `${b.replaceAll('@', '').replaceAll(/[/-]/g, '_')}_${key}`.toUpperCase()).find((k) => env[k]);
    return name === undefined ? undefined : env[name];
  };
  const disabled = scoped('DISABLE_THEME');
  if (disabled === '1' || disabled === 'true') return false;
  const home = env.HOME || homedir() || tmpdir();
  const configDir = scoped('CONFIG_DIR') || join(env.XDG_CONFIG_HOME || join(home, '.config'), pjson.oclif.dirname || pjson.name);
  return existsSync(resolve(configDir, 'theme.json'));
}
