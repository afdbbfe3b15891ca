// Which packages a process loads: a module resolve hook, registered before the script runs, writes down
// each package an ES module resolves into, and the process writes down at exit those of the CommonJS
// modules it required; a start-up test reads them to hold a command to what it must not load. They go to
// a file the test names (LOG_ENV), not to stderr: a pipe the test is slow to drain fills, and a write to
// it in the exit handler then fails and ends the process with an error it can no longer print.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The package a file (a path or a file URL) belongs to, as a line to print; none for a file of no package. */
const PACKAGE_LINE = `(file) => {
  const at = file.lastIndexOf('/node_modules/');
  if (at === -1) return '';
  const parts = file.slice(at + '/node_modules/'.length).split('/');
  return 'PACKAGE ' + (parts[0].startsWith('@') ? parts[0] + '/' + parts[1] : parts[0]) + '\\n';
}`;

/** Where the process writes down the packages it loads. */
const LOG_ENV = 'BERM_PACKAGES_LOG';

/** A resolve hook writing down each package an ES module resolves into, one `PACKAGE name` line. */
const HOOK = `
import { appendFileSync } from 'node:fs';
const line = ${PACKAGE_LINE};
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.${LOG_ENV}, line(resolved.url));
  return resolved;
}`;

/**
 * Registers the hook, and at exit writes down the packages of the CommonJS modules loaded (`require`,
 * which the hook does not see: ajv is loaded so, on first use).
 */
const REGISTER = `
import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});
const line = ${PACKAGE_LINE};
process.on('exit', () => {
  // The cache is the process's one, whichever module's require reads it (a data: URL has no path of its own).
  const files = Object.keys(createRequire('/require-cache.js').cache);
  appendFileSync(process.env.${LOG_ENV}, files.map(line).join(''));
});`;

/**
 * The packages loaded by a process that runs `script` (an ES module's text, importing by file URL, as it
 * runs from a directory of its own) with the hook registered, and what it printed. The script is a file,
 * not `-e`: bermd's runtime starts workers, which inherit the process's flags, `--input-type` with them.
 */
export async function packagesLoaded(script: string): Promise<{ packages: Set<string>; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'packages-loaded-'));
  const file = join(dir, 'run.mjs');
  const log = join(dir, 'packages.log');
  writeFileSync(file, script);
  writeFileSync(log, '');
  let stdout: string;
  let written: string;
  try {
    ({ stdout } = await run(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, file], {
      timeout: 60_000,
      env: { ...process.env, [LOG_ENV]: log },
    }));
    written = readFileSync(log, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const packages = new Set(
    written
      .split('\n')
      .filter((line) => line.startsWith('PACKAGE '))
      .map((line) => line.slice('PACKAGE '.length)),
  );
  return { packages, stdout };
}
