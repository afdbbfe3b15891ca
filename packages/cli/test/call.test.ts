// `berm call` against a real bermd, beside `crab run` on the same images: for the same image, tool and
// arguments both print the same --json document, or the same refusal with the same exit status, since
// both answer as /mcp does (the one through bermd, the other through bermd's runtime in the command line).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import { basicImage, relayImage } from '../../../test/helpers/guest.js';
import { stoppedAt } from '../../../test/helpers/timeouts.js';
import { controlCharacters, repoRoot, runCli, runCliBytes, Scratch, type CliResult } from './helpers/cli.js';

const SPIN_LIMIT = '300ms';
/** Each test runs the command line a few times, each a process of its own on a machine that may be busy. */
const CLI_TIMEOUT = 180_000;

let scratch: Scratch;
let daemon: RunningDaemon;
const images: Record<string, string> = {};

function json(result: CliResult): unknown {
  return JSON.parse(result.stdout);
}

beforeAll(async () => {
  scratch = await Scratch.create();
  images.echo = join(repoRoot, 'examples', 'echo.wasm');
  images.relay = await scratch.write('relay.wasm', (await relayImage()).bytes);
  images.basic = await scratch.write('basic.wasm', (await basicImage()).bytes);
  daemon = await startDaemon();
  const env = { BERM_URL: daemon.url };
  for (const [name, image] of Object.entries(images)) {
    const limits = name === 'relay' ? ['--call-timeout', SPIN_LIMIT] : [];
    const deployed = await runCli(['deploy', name, image, ...limits], { env });
    expect(deployed.stderr).toBe('');
    expect(deployed.code).toBe(0);
  }
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  if (daemon) await removeDir(daemon.stateDir);
  await scratch?.remove();
});

/** `crab run IMAGE TOOL ARGS --json` and `berm call HARNESS.TOOL ARGS --json`, each with the limits its harness was deployed with. */
async function both(harness: string, tool: string, args: string[]): Promise<{ run: CliResult; call: CliResult }> {
  const limits = harness === 'relay' ? ['--call-timeout', SPIN_LIMIT] : [];
  const [run, call] = await Promise.all([
    runCli(['run', images[harness]!, tool, ...args, ...limits, '--json']),
    runCli(['call', `${harness}.${tool}`, ...args, '--json'], { bin: 'berm', env: { BERM_URL: daemon.url } }),
  ]);
  return { run, call };
}

describe('berm call and crab run print the same document', { timeout: CLI_TIMEOUT }, () => {
  it.each([
    ['a structured result, from key=value pairs typed by the schema', 'echo', 'echo', ['text=hi there', 'times=2']],
    ['a structured result, from one JSON object', 'echo', 'echo', ['{"text": "hi", "times": 0}']],
    ['a result with the events its call emitted', 'relay', 'emit', ['{"event": "reading", "fields": {"celsius": 7}}']],
    ["the tool's own error", 'basic', 'fail', []],
    ['a result with the log lines its call wrote, an alias level kept as written', 'relay', 'log', ['{"level": "warn", "message": "hot"}']],
    ['a result with the log lines its call wrote, at the least severe level', 'relay', 'log', ['{"level": "trace", "message": "step"}']],
  ])('%s', async (_what, harness, tool, args) => {
    const { run, call } = await both(harness, tool, args);
    expect(call.stderr).toBe('');
    expect(run.stderr).toBe('');
    expect(call.stdout).toBe(run.stdout);
    expect(call.code).toBe(run.code);
  });

  it('holds the result, the content, the events and whether it is an error', async () => {
    const { call } = await both('relay', 'emit', ['{"event": "reading", "fields": {"celsius": 7}}']);
    expect(json(call)).toEqual({
      result: null,
      content: [{ type: 'text', text: '{"ok":null}' }],
      is_error: false,
      events: [{ harness: 'relay', tool: 'emit', event: 'reading', fields: { celsius: 7 } }],
      logs: [],
    });
    const logged = await both('relay', 'log', ['{"level": "info", "message": "forecast ran"}']);
    expect(json(logged.call)).toMatchObject({
      events: [],
      logs: [{ harness: 'relay', tool: 'log', level: 'info', message: 'forecast ran' }],
    });
    const echo = await both('echo', 'echo', ['text=hi', 'times=2']);
    expect(json(echo.run)).toMatchObject({ result: { text: 'hi', times: 2 }, is_error: false });
    const failed = await both('basic', 'fail', []);
    expect(json(failed.call)).toMatchObject({ result: null, is_error: true });
    expect(failed.call.code).toBe(1);
  });
});

describe('berm call and crab run refuse alike', { timeout: CLI_TIMEOUT }, () => {
  it.each([
    ['arguments that do not fit the schema', 'echo', 'echo', ['text=hi', 'times=many'], 2, 'invalid-arguments'],
    ['a required argument missing', 'echo', 'echo', ['times=1'], 2, 'invalid-arguments'],
    ['a tool the harness does not have', 'echo', 'nope', [], 2, 'unknown-tool'],
    ['a tool named with key=value arguments it does not have', 'echo', 'nope', ['a=1'], 2, 'unknown-tool'],
  ])('%s', async (_what, harness, tool, args, exit, code) => {
    const { run, call } = await both(harness, tool, args);
    expect(call.stdout).toBe(run.stdout);
    expect(json(call)).toEqual({ error: expect.objectContaining({ code }) });
    expect(call.code).toBe(exit);
    expect(run.code).toBe(exit);
  });

  it('names the tools a harness has when the one asked for is not among them', async () => {
    const { call } = await both('echo', 'nope', []);
    expect((json(call) as { error: { message: string } }).error.message).toBe('echo has no tool "nope"; its tools: echo, size');
  });

  it('stops a call at the time limit its harness runs with, with the same code and words', async () => {
    const { run, call } = await both('relay', 'spin', []);
    for (const result of [run, call]) {
      const { error } = json(result) as { error: { code: string; message: string } };
      expect(error.code).toBe('timeout');
      expect(error.message).toMatch(stoppedAt('relay.spin', 300));
      expect(result.code).toBe(1);
    }
  });

  it('says when no harness of that name is deployed, exit 1', async () => {
    const call = await runCli(['call', 'absent.tool', '--json'], { bin: 'berm', env: { BERM_URL: daemon.url } });
    expect(json(call)).toEqual({ error: expect.objectContaining({ code: 'not-found' }) });
    expect(call.code).toBe(1);
  });

  it('says when bermd cannot be reached, exit 3', async () => {
    const call = await runCli(['call', 'echo.echo', 'text=hi'], { bin: 'berm', env: { BERM_URL: 'http://127.0.0.1:1' } });
    expect(call.stderr).toMatch(/^berm: could not reach bermd at http:\/\/127\.0\.0\.1:1 /);
    expect(call.code).toBe(3);
  });
});

describe('berm call for people', { timeout: CLI_TIMEOUT }, () => {
  it('takes HARNESS TOOL as two words, and prints the result and the events, what the guest chose made printable', async () => {
    const fields = '{"event": "reading", "fields": {"celsius": 7, "note": "\\u001b[31mred"}}';
    const call = await runCliBytes(['call', 'relay', 'emit', fields], { bin: 'berm', env: { BERM_URL: daemon.url } });
    expect(call.code).toBe(0);
    expect(controlCharacters(call.stdout)).toEqual([]);
    expect(call.stdout.toString('utf8')).toBe('{"ok":null}\nevent relay/reading (emit) {"celsius":7,"note":"\\u001b[31mred"}\n');
  });

  it("prints a guest's log lines made printable, so none of its escape sequences reaches the terminal", async () => {
    // ESC and CSI (U+009B, C1) would each start a sequence: the line turns them into what is visible.
    const line = JSON.stringify({ level: 'info', message: 'hot \u001b[31mred \u009b2J end' });
    const call = await runCliBytes(['call', 'relay.log', line], { bin: 'berm', env: { BERM_URL: daemon.url } });
    expect(call.code).toBe(0);
    expect(controlCharacters(call.stdout)).toEqual([]);
    expect(call.stdout.toString('utf8')).toBe('{"ok":null}\nlog info relay/log: hot \u241b[31mred \ufffd2J end\n');
  });
});
