#!/usr/bin/env node
// Writes oclif.manifest.json: the command list with each command's args and flags, so that
// start-up reads one JSON file instead of importing every command (and all they import) to
// learn their names. The same thing `oclif manifest` does, without that package's install weight.
// Run by the build (root `prepare`/`build`/`test` scripts) after `tsc -b`.
//
// Then oclif.help.json, which the fast path (src/fast-path/help.ts) answers help and a mistyped command
// from without loading oclif's Config: what that Config holds as bin/run.js loads it, with the plugins
// package.json lists and without them (the commands, the topics, their lookups, the plugins' states and
// hooks), and the help oclif's own Help class prints from it off a terminal (80 columns, no colour) for
// every command and topic under each of the program's names.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The texts are the ones oclif prints off a terminal, whatever the terminal the build runs in: no colour
// (read by supports-color when oclif is loaded) and 80 columns (given to Help below).
process.env.FORCE_COLOR = '0';
const { Config, Plugin } = await import('@oclif/core');
const { Help } = await import('@oclif/core/help');

const root = fileURLToPath(new URL('..', import.meta.url));
const plugin = new Plugin({ root, type: 'core', isRoot: true, ignoreManifest: true, errorOnManifestCreate: true });
await plugin.load();
writeFileSync(new URL('../oclif.manifest.json', import.meta.url), `${JSON.stringify(plugin.manifest, null, 2)}\n`);

/** What the root help's VERSION line holds in the texts: the fast path puts the running node's userAgent in. */
const USER_AGENT = '{{userAgent}}';
const WIDTH = 80;
const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const bins = [pjson.oclif.bin, ...pjson.oclif.binAliases];
const own = { commandIDs: plugin.commandIDs, topics: plugin.topics.map((t) => t.name) };
const { namesOwnCommand } = await import('../dist/fast-path/plugins.js');

const commands = [];
const byText = new Map();
/** The command's index in `commands`, one entry for each distinct command object of either view. */
function indexOf(command) {
  const text = JSON.stringify(command);
  if (!byText.has(text)) {
    byText.set(text, commands.length);
    commands.push(JSON.parse(text));
  }
  return byText.get(text);
}

/** The Config bin/run.js gives oclif when `bin` is typed: the root plugin, and the listed plugins when `withPlugins`. */
async function load(bin, withPlugins) {
  const named = { ...pjson, oclif: { ...pjson.oclif, bin, binAliases: bins.filter((b) => b !== bin) } };
  const rootPlugin = new Plugin({ root, pjson: named, isRoot: true });
  await rootPlugin.load();
  const plugins = new Map([[rootPlugin.name, rootPlugin]]);
  if (withPlugins) {
    for (const name of pjson.oclif.plugins ?? []) {
      const child = new Plugin({ root, name, type: 'core', parent: rootPlugin });
      await child.load();
      plugins.set(child.name, child);
    }
  }
  const config = await Config.load({ root, pjson: named, plugins });
  config.userAgent = USER_AGENT;
  return config;
}

/** What oclif prints for help on `words` (a command's or topic's, nothing for the root), as `run` prints it. */
async function render(config, words) {
  let text = '';
  const write = process.stdout.write;
  process.stdout.write = (chunk) => {
    text += chunk;
    return true;
  };
  try {
    await new Help(config, { ...(pjson.oclif.helpOptions ?? pjson.helpOptions), maxWidth: WIDTH }).showHelp(words);
  } finally {
    process.stdout.write = write;
  }
  return text;
}

async function view(withPlugins) {
  const config = await load(bins[0], withPlugins);
  const hooks = {};
  for (const p of config.plugins.values()) {
    for (const [event, list] of Object.entries(p.hooks ?? {})) hooks[event] = (hooks[event] ?? 0) + list.length;
  }
  // The subjects this view answers: those whose line bin/run.js gives these plugins, the root's to the fuller.
  const subjects = [...new Set([...config.commandIDs, ...config.topics.map((t) => t.name)])]
    .map((id) => id.split(':'))
    .filter((words) => namesOwnCommand(words, own) !== withPlugins);
  if (withPlugins) subjects.unshift([]);
  const texts = {};
  for (const bin of bins) {
    texts[bin] = {};
    // A Config of its own for each: Help rewrites the ids of the commands it lists.
    for (const words of subjects) texts[bin][words.join(' ')] = await render(await load(bin, withPlugins), words);
  }
  return {
    commands: config.commands.map(indexOf),
    commandPermutations: [...config.commandPermutations.validPermutations],
    topics: config.topics,
    topicPermutations: [...config.topicPermutations.validPermutations],
    plugins: Object.fromEntries([...config.plugins.values()].map((p) => [p.name, { state: p.pjson.oclif?.state ?? null }])),
    hooks,
    flexibleTaxonomy: config.flexibleTaxonomy ?? false,
    isSingleCommandCLI: config.isSingleCommandCLI,
    texts,
  };
}

const views = { own: await view(false), all: await view(true) };
writeFileSync(
  new URL('../oclif.help.json', import.meta.url),
  `${JSON.stringify({ root: own, width: WIDTH, userAgent: USER_AGENT, views, commands })}\n`,
);
