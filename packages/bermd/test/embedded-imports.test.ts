// What the embedded runtime (the `./runtime` export, under `crab run`) loads to run a call: the rooms it
// needs through their light doors, and none of what only the daemon uses. A child process imports the
// built entry with a module hook that prints every package resolved, opens the echo example, calls it
// and closes; the test reads the packages from that output. The entry is the bundle the build makes of
// those modules (scripts/bundle.js), which is what it loads once built.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packagesLoaded } from '../../../test/helpers/packages.js';

const entry = new URL('../dist/embedded/entry.js', import.meta.url).href;
const bundle = fileURLToPath(new URL('../dist/runtime/embedded-bundle.cjs', import.meta.url));
const echo = fileURLToPath(new URL('../../../examples/echo.wasm', import.meta.url));

/** What only the daemon uses: its HTTP server, the MCP SDK, the PostgreSQL driver, its logger, telemetry. */
const DAEMON_ONLY = ['fastify', '@modelcontextprotocol/server', '@modelcontextprotocol/core', 'pg', 'pino', 'jose', '@opentelemetry/api'];

describe('the embedded runtime', () => {
  it('is loaded from its bundle once built, and starts its workers on theirs', async () => {
    const door = await import(entry);
    const { requireBundle } = await import('../dist/runtime/code-cache.js');
    const bundled = requireBundle(bundle) as typeof door;
    expect(door.EmbeddedRuntime).toBe(bundled.EmbeddedRuntime);
    expect(door.startWorkers).toBe(bundled.startWorkers);
    const { workerScriptPath } = await import('../dist/runtime/worker-script.js');
    expect(workerScriptPath()).toBe(fileURLToPath(new URL('../dist/runtime/worker-bundle.cjs', import.meta.url)));
  });

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
