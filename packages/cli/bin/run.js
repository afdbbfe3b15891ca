#!/usr/bin/env node
// crab and berm are one CLI under two names. Help and error lines use the name that was typed,
// so the oclif bin is set from the script's own name before oclif reads the package.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const typed = basename(process.argv[1] ?? '');
if ([pjson.oclif.bin, ...pjson.oclif.binAliases].includes(typed)) pjson.oclif.bin = typed;
const argv = process.argv.slice(2);
// A reader that stops early (`| head`) closes the pipe; that ends the output, not in a crash.
// oclif's Command installs the same handler, but the fast path below never loads it.
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
});

// `inspect --json IMAGE` is what scripts and CI run, often in loops, so its start-up is what
// counts. oclif cannot make it fast: loading @oclif/core and its config alone (`crab --version`)
// costs about 2.3x a bare `node -e 0`, before any command is imported (bench/cli.js measures the
// whole command). So exactly that command line skips oclif and calls the function the command's
// `--json` path calls; anything else (other flags, `--help`, human output) goes through oclif.
const image = plainInspectJsonImage(argv);
if (image !== undefined) {
  const { inspectJson } = await import('../dist/inspect-json.js');
  await inspectJson(image, pjson.oclif.bin);
} else {
  const [{ run }, { Plugin }] = await Promise.all([import('@oclif/core/run'), import('@oclif/core/config')]);
  const root = fileURLToPath(new URL('..', import.meta.url));
  // The root plugin is built here only to tell oclif when oclif.manifest.json is stale.
  const plugin = new Plugin({ root, pjson, isRoot: true, ignoreManifest: manifestIsStale() });
  await plugin.load();
  try {
    await run(argv, { root, pjson, plugins: new Map([[plugin.name, plugin]]) });
  } catch (err) {
    // Commands report their own failures; what reaches here failed before one ran (an unknown command).
    const { reportUncaught } = await import('../dist/report.js');
    reportUncaught(err, pjson.oclif.bin, argv);
  }
}

/**
 * oclif.manifest.json lists the commands so that start-up need not import them all; the build
 * writes it after compiling (scripts/oclif-manifest.js). A compiled command newer than it (a
 * `tsc -b` without the rest of the build) would be missing or stale in it, so it is then ignored
 * and oclif reads the commands themselves: slower, never wrong.
 */
function manifestIsStale() {
  try {
    const written = statSync(new URL('../oclif.manifest.json', import.meta.url)).mtimeMs;
    const dir = new URL('../dist/commands/', import.meta.url);
    return readdirSync(dir, { recursive: true })
      .filter((f) => f.endsWith('.js'))
      .some((f) => statSync(new URL(f, dir)).mtimeMs > written);
  } catch {
    return true;
  }
}

/** The IMAGE of `inspect --json IMAGE` or `inspect IMAGE --json`, and of nothing else. */
function plainInspectJsonImage(args) {
  if (args.length !== 3 || args[0] !== 'inspect') return undefined;
  const rest = args.slice(1);
  const operands = rest.filter((a) => a !== '--json');
  return rest.length - operands.length === 1 && !operands[0].startsWith('-') ? operands[0] : undefined;
}
