#!/usr/bin/env node
// The help oclif's Help class prints for every command and topic, rendered for oclif.help.json by
// scripts/oclif-manifest.js, which runs this twice: without colour at the width oclif gives a stdout that is
// not a terminal, and in colour at each width of a terminal the table holds. Colour is read by oclif's
// supports-color and by ansis when they are loaded, so each of the two is a process of its own
// (FORCE_COLOR set by the caller), and prints its texts as JSON on stdout: for each of the two sets of
// plugins bin/run.js loads and each subject (its words, `''` the root), the texts by width.
//
// The program's name is rendered as a stand-in of its length (all its names having one length) and put in
// by the fast path, as the root help's VERSION line is; the texts then serve both names.
import { readFileSync } from 'node:fs';

const [, , from, to, bin, userAgent] = process.argv;
const { loadConfig } = await import('./oclif-config.js');
const { Help } = await import('@oclif/core/help');
const { namesOwnCommand } = await import('../dist/fast-path/plugins.js');

const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const named = { ...pjson, oclif: { ...pjson.oclif, bin, binAliases: [] } };

/** The Config bin/run.js gives oclif: the root plugin, and the plugins package.json lists when `withPlugins`. */
async function load(withPlugins) {
  const { config, rootPlugin } = await loadConfig(named, withPlugins);
  config.userAgent = userAgent;
  return { config, own: { commandIDs: rootPlugin.commandIDs, topics: rootPlugin.topics.map((t) => t.name) } };
}

/** What oclif prints for help on `words` at `width`, as `run` prints it (Help's lines, through console.log). */
async function render(config, words, width) {
  // Help rewrites the ids and names of what it lists: each rendering starts from Config's own.
  const ids = config.commands.map((c) => [c, c.id, c.aliases]);
  const names = config.topics.map((t) => [t, t.name]);
  let text = '';
  const write = process.stdout.write;
  process.stdout.write = (chunk) => {
    text += chunk;
    return true;
  };
  try {
    await new Help(config, { ...(pjson.oclif.helpOptions ?? pjson.helpOptions), maxWidth: width }).showHelp(words);
  } finally {
    process.stdout.write = write;
    for (const [c, id, aliases] of ids) Object.assign(c, { id, aliases });
    for (const [t, name] of names) t.name = name;
  }
  return text;
}

const views = {};
for (const [view, withPlugins] of [
  ['own', false],
  ['all', true],
]) {
  const { config, own } = await load(withPlugins);
  // The subjects this view answers: those whose line bin/run.js gives these plugins; the root, the fuller.
  const subjects = [...new Set([...config.commandIDs, ...config.topics.map((t) => t.name)])]
    .map((id) => id.split(':'))
    .filter((words) => namesOwnCommand(words, own) !== withPlugins);
  if (withPlugins) subjects.unshift([]);
  views[view] = {};
  for (const words of subjects) {
    const texts = [];
    for (let width = Number(from); width <= Number(to); width++) texts.push(await render(config, words, width));
    views[view][words.join(' ')] = texts;
  }
}
process.stdout.write(JSON.stringify(views));
