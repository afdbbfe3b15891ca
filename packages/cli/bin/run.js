#!/usr/bin/env node
// crab and berm are one CLI under two names. Help and error lines use the name that was typed,
// so the oclif bin is set from the script's own name before oclif reads the package.
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const typed = basename(process.argv[1] ?? '');
// The other name stays an alias, so that the completion `autocomplete` writes covers both names.
const names = [pjson.oclif.bin, ...pjson.oclif.binAliases];
if (names.includes(typed)) {
  pjson.oclif.bin = typed;
  pjson.oclif.binAliases = names.filter((name) => name !== typed);
}
const argv = process.argv.slice(2);
// A reader that stops early (`| head`) closes the pipe; that ends the output, not in a crash.
// oclif's Command installs the same handler, but the fast path below never loads it.
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
});

// A command line src/fast-path.ts is sure it reads as oclif would runs the command's work without loading
// oclif, which costs more to load than most commands take without it; `--version` is answered there too,
// and so are help and a mistyped command's did-you-mean, by oclif's own Help class and reading of the id
// over oclif.help.json. Anything else (a shape it declines) goes through oclif. The reading is driven by
// oclif.manifest.json, so a stale one (see manifestIsStale) sends every line through oclif.
const stale = manifestIsStale();
const fast = await import('../dist/fast-path.js');
let answered = false;
if (!stale) {
  if (argv[0] === '--version') {
    const line = await fast.versionLine(pjson);
    if (line !== undefined) console.log(line);
    answered = line !== undefined;
  } else {
    const table = () => JSON.parse(readFileSync(new URL('../oclif.manifest.json', import.meta.url), 'utf8'));
    const reading = await fast.readCommandLine(argv, table, { bins: [pjson.oclif.bin, ...pjson.oclif.binAliases], env: process.env });
    if (reading !== undefined) await fast.runReading(reading, pjson.oclif.bin);
    answered = reading !== undefined;
    if (!answered) answered = await fast.answerWithoutCommand(argv, { pjson, env: process.env, table: helpTable });
  }
}
if (!answered) {
  const [{ run }, { Plugin }] = await Promise.all([import('@oclif/core/run'), import('@oclif/core/config')]);
  const root = fileURLToPath(new URL('..', import.meta.url));
  // The root plugin is built here only to tell oclif when oclif.manifest.json is stale.
  const plugin = new Plugin({ root, pjson, isRoot: true, ignoreManifest: stale });
  await plugin.load();
  const plugins = new Map([[plugin.name, plugin]]);
  // Given the plugins, oclif loads no others. The ones package.json lists (`autocomplete`) are loaded only
  // when the command line is not one of crab's own commands, so that a command pays nothing for them:
  // `crab autocomplete`, help on the whole CLI (which lists them), and an unknown command (whose
  // did-you-mean looks at every command).
  if (!fast.namesOwnCommand(argv, { commandIDs: plugin.commandIDs, topics: plugin.topics.map((t) => t.name) })) {
    for (const name of pjson.oclif.plugins ?? []) {
      const child = new Plugin({ root, name, type: 'core', parent: plugin });
      await child.load();
      plugins.set(child.name, child);
    }
  }
  try {
    await run(argv, { root, pjson, plugins });
  } catch (err) {
    // Commands report their own failures; what reaches here failed before one ran (an unknown command).
    const { reportUncaught } = await import('../dist/report.js');
    reportUncaught(err, pjson.oclif.bin, argv);
  }
}

/**
 * oclif.help.json, which the build writes after oclif.manifest.json (scripts/oclif-manifest.js), or undefined
 * when there is none or it is older than the manifest (a build stopped between the two).
 */
function helpTable() {
  try {
    const help = new URL('../oclif.help.json', import.meta.url);
    if (statSync(help).mtimeMs < statSync(new URL('../oclif.manifest.json', import.meta.url)).mtimeMs) return undefined;
    return JSON.parse(readFileSync(help, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * oclif.manifest.json lists the commands so that start-up need not import them all, and the fast path
 * reads its command lines from it; the build writes it after compiling (scripts/oclif-manifest.js). A
 * compile after it (a `tsc -b` without the rest of the build) may have left it missing or stale, so it is
 * then ignored: every line goes through oclif, which reads the commands themselves; slower, never wrong.
 * The compiler's build record (tsconfig.tsbuildinfo, rewritten by every compile that emits) tells of such
 * a compile in one look, where comparing every compiled command took one per file. An installed package
 * has no build record: its manifest is the one built with it.
 */
function manifestIsStale() {
  let written;
  try {
    written = statSync(new URL('../oclif.manifest.json', import.meta.url)).mtimeMs;
  } catch {
    return true;
  }
  try {
    return statSync(new URL('../tsconfig.tsbuildinfo', import.meta.url)).mtimeMs > written;
  } catch {
    return false;
  }
}
