// What the embedded runtime (the `./runtime` export, under `crab run`) loads to run a call: the rooms it
// needs through their light doors, and none of what only the daemon uses. A child process imports the
// built entry with a module hook that prints every package resolved, opens the echo example, calls it
// and closes; the test reads the packages from that output.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const entry = new URL('../dist/embedded/index.js', import.meta.url).href;
const echo = fileURLToPath(new URL('../../../examples/echo.wasm', import.meta.url));

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
 * The packages loaded by a process that runs `script` (an ES module's text) with the hook registered. The
 * script is a file, not `-e`: the runtime's workers inherit the process's flags, and `--input-type` with them.
 */
async function packagesLoaded(script: string): Promise<{ packages: Set<string>; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'bermd-embedded-imports-'));
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

/** What only the daemon uses: its HTTP server, the MCP SDK, the PostgreSQL driver, its logger, telemetry. */
const DAEMON_ONLY = ['fastify', '@modelcontextprotocol/server', '@modelcontextprotocol/core', 'pg', 'pino', 'jose', '@opentelemetry/api'];

describe('the embedded runtime', () => {
  it('runs a call loading none of what only the daemon uses', async () => {
    const { packages, stdout } = await packagesLoaded(`
      import { readFileSync } from 'node:fs';
      const { EmbeddedRuntime } = await import(${JSON.stringify(entry)});
      const runtime = await EmbeddedRuntime.open([{ name: 'echo', bytes: new Uint8Array(readFileSync(${JSON.stringify(echo)})) }]);
      const answer = await runtime.call('echo', 'echo', { text: 'hi' });
      await runtime.close();
      process.stdout.write(JSON.stringify(answer.result));
    `);
    expect(JSON.parse(stdout)).toEqual({ text: 'hi' });
    // The hook saw the packages the run does load: its silence about the others means something.
    expect(packages).toContain('ajv');
    expect(DAEMON_ONLY.filter((name) => packages.has(name))).toEqual([]);
  });

  it('loads pino, for the egress, only when a syscall is served', async () => {
    const { packages } = await packagesLoaded(`
      import { readFileSync } from 'node:fs';
      const { EmbeddedRuntime } = await import(${JSON.stringify(entry)});
      const runtime = await EmbeddedRuntime.open([{ name: 'echo', bytes: new Uint8Array(readFileSync(${JSON.stringify(echo)})) }], { serve: ['berm.http.fetch'] });
      await runtime.close();
    `);
    expect(packages).toContain('pino');
    expect(packages).toContain('undici');
  });
});
