// Which packages a process loads: a module resolve hook, registered before the script runs, prints each
// package a module resolves into; a start-up test reads them to hold a command to what it must not load.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A resolve hook printing each package a module resolves to, one `PACKAGE name` line on stderr. */
const HOOK = `
import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const at = resolved.url.lastIndexOf('/node_modules/');
  if (at !== -1) {
    const parts = resolved.url.slice(at + '/node_modules/'.length).split('/');
    writeSync(2, 'PACKAGE ' + (parts[0].startsWith('@') ? parts[0] + '/' + parts[1] : parts[0]) + '\\n');
  }
  return resolved;
}`;

const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});`;

/**
 * The packages loaded by a process that runs `script` (an ES module's text, importing by file URL, as it
 * runs from a directory of its own) with the hook registered, and what it printed. The script is a file,
 * not `-e`: bermd's runtime starts workers, which inherit the process's flags, `--input-type` with them.
 */
export async function packagesLoaded(script: string): Promise<{ packages: Set<string>; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'packages-loaded-'));
  const file = join(dir, 'run.mjs');
  writeFileSync(file, script);
  let stdout: string;
  let stderr: string;
  try {
    ({ stdout, stderr } = await run(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, file], {
      timeout: 60_000,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const packages = new Set(
    stderr
      .split('\n')
      .filter((line) => line.startsWith('PACKAGE '))
      .map((line) => line.slice('PACKAGE '.length)),
  );
  return { packages, stdout };
}
