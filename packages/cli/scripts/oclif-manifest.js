#!/usr/bin/env node
// Writes oclif.manifest.json: the command list with each command's args and flags, so that
// start-up reads one JSON file instead of importing every command (and all they import) to
// learn their names. The same thing `oclif manifest` does, without that package's install weight.
// Run by the build (root `prepare`/`build`/`test` scripts) after `tsc -b`.
//
// Then oclif.help.json, which the fast path (src/fast-path/help.ts) answers help and a mistyped command
// from without loading oclif's Config: what that Config holds as bin/run.js loads it, with the plugins
// package.json lists and without them (the commands, the topics, their lookups, the plugins' states and
// hooks), and the help oclif's own Help class prints from it (scripts/help-texts.js) for every command and
// topic: off a terminal (80 columns, no colour) in the JSON, and on a terminal (in colour, each width from
// 40 to 200 columns) in oclif.help.bin, brotli-compressed by runs of widths, which the JSON indexes.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompressSync, constants } from 'node:zlib';
import { Plugin } from '@oclif/core';
import { loadConfig } from './oclif-config.js';

const run = promisify(execFile);

const root = fileURLToPath(new URL('..', import.meta.url));
const plugin = new Plugin({ root, type: 'core', isRoot: true, ignoreManifest: true, errorOnManifestCreate: true });
await plugin.load();
writeFileSync(new URL('../oclif.manifest.json', import.meta.url), `${JSON.stringify(plugin.manifest, null, 2)}\n`);

/** What the root help's VERSION line holds in the texts: the fast path puts the running node's userAgent in. */
const USER_AGENT = '{{userAgent}}';
const PLAIN = 80;
const TERMINAL = { from: 40, to: 200, run: 32 };
const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const bins = [pjson.oclif.bin, ...pjson.oclif.binAliases];
const own = { commandIDs: plugin.commandIDs, topics: plugin.topics.map((t) => t.name) };

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

/** What oclif's Config holds, as bin/run.js loads it: the root plugin, and the listed plugins when `withPlugins`. */
async function view(withPlugins) {
  const { config } = await loadConfig(pjson, withPlugins);
  const hooks = {};
  for (const p of config.plugins.values()) {
    for (const [event, list] of Object.entries(p.hooks ?? {})) hooks[event] = (hooks[event] ?? 0) + list.length;
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
  };
}

/** scripts/help-texts.js's texts for widths `from` to `to`, with colour as FORCE_COLOR says. */
async function texts(from, to, bin, colour) {
  const env = { ...process.env, FORCE_COLOR: colour ? '1' : '0' };
  for (const name of ['OCLIF_COLUMNS', 'NO_COLOR']) delete env[name];
  const script = fileURLToPath(new URL('./help-texts.js', import.meta.url));
  const { stdout } = await run(process.execPath, [script, String(from), String(to), bin, USER_AGENT], {
    env,
    maxBuffer: 1 << 30,
  });
  return JSON.parse(stdout);
}

const views = { own: await view(false), all: await view(true) };
const table = { root: own, views, commands };
// The texts stand for every name when the names are of one length; else the fast path renders help itself.
const bin = [...'QXZJ'].map((c) => c.repeat(bins[0].length)).find((b) => !JSON.stringify([pjson, plugin.manifest]).includes(b));
const chunks = [];
if (bins.every((b) => b.length === bins[0].length) && bin !== undefined) {
  // The terminal's widths in two processes, the rendering being most of the build's time here.
  const middle = Math.floor((TERMINAL.from + TERMINAL.to) / 2);
  const [plain, narrow, wide] = await Promise.all([
    texts(PLAIN, PLAIN, bin, false),
    texts(TERMINAL.from, middle, bin, true),
    texts(middle + 1, TERMINAL.to, bin, true),
  ]);
  const terminal = Object.fromEntries(
    Object.entries(narrow).map(([name, subjects]) => [
      name,
      Object.fromEntries(Object.entries(subjects).map(([subject, byWidth]) => [subject, [...byWidth, ...wide[name][subject]]])),
    ]),
  );
  let offset = 0;
  const index = {};
  for (const [name, subjects] of Object.entries(terminal)) {
    views[name].texts = Object.fromEntries(Object.entries(plain[name]).map(([subject, [text]]) => [subject, text]));
    index[name] = {};
    for (const [subject, byWidth] of Object.entries(subjects)) {
      // Each run of widths one brotli stream of its distinct texts, NUL-separated; a width, its stream and place.
      const runs = [];
      const at = [];
      for (let i = 0; i < byWidth.length; i += TERMINAL.run) {
        const distinct = [...new Set(byWidth.slice(i, i + TERMINAL.run))];
        const chunk = brotliCompressSync(distinct.join('\0'), {
          params: { [constants.BROTLI_PARAM_QUALITY]: 7, [constants.BROTLI_PARAM_LGWIN]: 22 },
        });
        runs.push([offset, chunk.length]);
        chunks.push(chunk);
        offset += chunk.length;
        for (const text of byWidth.slice(i, i + TERMINAL.run)) at.push(distinct.indexOf(text));
      }
      index[name][subject] = { runs, at };
    }
  }
  Object.assign(table, { bin, userAgent: USER_AGENT, width: PLAIN, terminal: { ...TERMINAL, index } });
}
writeFileSync(new URL('../oclif.help.bin', import.meta.url), Buffer.concat(chunks));
writeFileSync(new URL('../oclif.help.json', import.meta.url), `${JSON.stringify(table)}\n`);
