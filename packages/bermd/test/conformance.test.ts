// The MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, its active server scenarios)
// against a real bermd: examples/conformance built with the real compiler, deployed as `test` on a bermd
// listening on 127.0.0.1 (the DNS-rebinding scenario needs a loopback URL) that names tools `test_<tool>`
// and the harness's resources `test://...`, and the suite's own CLI run against its /mcp, exactly as a
// user runs it (scripts/conformance.js). The suite opens a session per scenario and never ends one (about
// 31 a run); bermd's default session cap (1000) holds them all, so no scenario meets a closed session.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script without type declarations
import { buildGuestExample } from '../../../examples/build.js';
// @ts-expect-error: a plain ESM script without type declarations
import { suiteCommand } from '../../../scripts/conformance.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Arrivals, connect, deploy, valueOf } from './mcp-client.js';

/** How many scenarios the suite's active set holds in the version the root package.json pins. */
const ACTIVE_SCENARIOS = 30;
/** A hang guard only: the suite takes seconds, and is stopped (and the test failed, showing its output) past this. */
const SUITE_BOUND_MS = 240_000;

interface SuiteRun {
  code: number | string;
  output: string;
}

/** Runs the suite with `args` to its exit; its stdout and stderr together, without colour. */
function runSuite(args: string[]): Promise<SuiteRun> {
  const { command, args: full } = suiteCommand(args) as { command: string; args: string[] };
  const child = spawn(command, full, { env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const bound = setTimeout(() => {
    output += `\n[the suite ran past ${SUITE_BOUND_MS} ms and was stopped]\n`;
    child.kill('SIGKILL');
  }, SUITE_BOUND_MS);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(bound);
      resolve({ code: code ?? signal ?? -1, output: output.replace(/\u001b\[[0-9;]*m/g, '') });
    });
  });
}

/** What the suite's own output says: the active set's size, the scenarios it ran, and each one's summary line. */
function readSuite(output: string) {
  const size = /^Running active suite \((\d+) scenarios\)/m.exec(output)?.[1];
  const ran = [...output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]!);
  const summary = output.slice(output.indexOf('=== SUMMARY ==='));
  const lines = [...summary.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed$/gm)].map((m) => ({
    name: m[2]!,
    passed: m[1] === '✓' && Number(m[4]) === 0 && Number(m[3]) > 0,
  }));
  const total = /^Total: (\d+) passed, (\d+) failed$/m.exec(summary);
  return { size: size === undefined ? undefined : Number(size), ran, lines, failedChecks: total === null ? undefined : Number(total[2]) };
}

describe('the MCP conformance suite against bermd serving examples/conformance', () => {
  let daemon: RunningDaemon;
  beforeAll(async () => {
    const image: Uint8Array = await buildGuestExample('conformance');
    daemon = await startDaemon({ args: ['--tool-separator', '_', '--resource-uris', 'harness-scheme'] });
    await deploy(daemon.url, 'test', image);
  }, 180_000);
  afterAll(async () => {
    await daemon?.stop();
    if (daemon) await removeDir(daemon.stateDir);
  });

  it('passes every scenario of the active set, each named in the summary', async () => {
    expect(new URL(daemon.url).hostname).toBe('127.0.0.1');
    const run = await runSuite(['--url', `${daemon.url}/mcp`]);
    const suite = readSuite(run.output);
    const shown = `the suite's output:\n${run.output}`;
    expect(suite.size, shown).toBe(ACTIVE_SCENARIOS);
    expect(suite.ran, shown).toHaveLength(ACTIVE_SCENARIOS);
    expect(
      suite.lines.map((l) => l.name),
      shown,
    ).toEqual(suite.ran);
    expect(
      suite.lines.filter((l) => !l.passed).map((l) => l.name),
      shown,
    ).toEqual([]);
    expect(suite.failedChecks, shown).toBe(0);
    expect(run.code, shown).toBe(0);
  }, 300_000);

  it('tells a session subscribed to the watched resource when the example says it changed', async () => {
    const watcher = await connect(daemon.url);
    try {
      const updated = new Arrivals<string>();
      watcher.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
      expect(await watcher.client.subscribeResource({ uri: 'test://watched-resource' })).toEqual({});
      const touched = await watcher.client.callTool({ name: 'test_touch_watched', arguments: {} });
      expect(touched.isError).toBeFalsy();
      expect(valueOf(touched as never)).toBe(true);
      await updated.reach(1);
      expect(updated.received).toEqual(['test://watched-resource']);
    } finally {
      await watcher.client.close();
    }
  });
});
