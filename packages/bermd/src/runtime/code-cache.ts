/**
 * A CommonJS bundle the build wrote (scripts/bundle.js) loaded with the V8 code cache the build wrote
 * beside it (`codeCachePath`): V8 then takes the bundle's compiled code from the cache rather than
 * parsing and compiling it again, in each process, function by function as it runs. Node 22 caches
 * compiled modules itself (`module.enableCompileCache`); Node 20, which bermd supports, does not, so
 * the bundles a command's start compiles most of (the embedded runtime's, ajv's) are loaded so.
 *
 * The cache is used only when it is newer than the bundle (the build writes it right after); V8 refuses
 * one made by another V8 or under other flags, and then compiles the bundle as `require` would. Either
 * way the module is the bundle's code, run once, as `require` runs it.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** Node's own wrapper of a CommonJS module's code. */
const WRAPPER = ['(function (exports, require, module, __filename, __dirname) { ', '\n});'] as const;

/**
 * Where `file`'s code cache is, for the V8 running: named by its version, since another V8 refuses a
 * cache (the tests run the build's bundles under Node 22 and 24 too), and reading one only to have it
 * refused would cost the start what the cache saves.
 */
export function codeCachePath(file: string): string {
  return `${file}.v8-${process.versions.v8}.cache`;
}

function cacheOf(file: string): Buffer | undefined {
  const cache = codeCachePath(file);
  try {
    if (statSync(cache).mtimeMs < statSync(file).mtimeMs) return undefined;
    return readFileSync(cache);
  } catch {
    return undefined;
  }
}

const loaded = new Map<string, { exports: unknown; script: Script }>();

/** The exports of the CommonJS file `file` (an absolute path), loaded once per process, with its code cache when it has a good one. */
export function requireBundle(file: string): unknown {
  let entry = loaded.get(file);
  if (entry === undefined) {
    const script = new Script(`${WRAPPER[0]}${readFileSync(file, 'utf8')}${WRAPPER[1]}`, { filename: file, cachedData: cacheOf(file) });
    const module = { exports: {} as unknown };
    (script.runInThisContext() as (...args: unknown[]) => void).call(
      module.exports,
      module.exports,
      createRequire(file),
      module,
      file,
      dirname(file),
    );
    entry = { exports: module.exports, script };
    loaded.set(file, entry);
  }
  return entry.exports;
}

/**
 * Writes `file`'s code cache, for the build: after `warm` has run what a start runs of it (in this
 * process, loaded by `requireBundle`), so the cache holds those functions compiled too.
 */
export async function writeCodeCache(file: string, warm: (exports: unknown) => unknown): Promise<void> {
  await warm(requireBundle(file));
  const own = codeCachePath(file);
  // Another Node's cache of an older bundle would only be refused: it goes.
  const prefix = `${basename(file)}.v8-`;
  for (const name of readdirSync(dirname(file)))
    if (name.startsWith(prefix) && name.endsWith('.cache') && join(dirname(file), name) !== own)
      rmSync(join(dirname(file), name), { force: true });
  writeFileSync(own, loaded.get(file)!.script.createCachedData());
}
