// The live figures through a real bermd with OpenTelemetry off (they are not its): calls made with the
// official MCP SDK client (answered, failed, refused for their arguments, timed out) are counted per tool
// and kind by GET /harnesses/{name}/figures and per minute by GET /figures, with durations ordered as the
// calls' time limits make them; GET /figures/events names the harness a call moved; an undeployed
// harness has no figures; and every one of these needs berm:read.
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FiguresChange, FiguresSummary, HarnessFigures, ToolFigures } from '@berm/protocol';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { as, bearer, errorOf, writeAccess } from './access.js';
import { removeDir, type RunningDaemon, startDaemon, tempDir } from './daemon.js';
import { connect, type McpConnection } from './mcp-client.js';
import { within } from './replicas.js';

const TOOLS = ['ok', 'fail', 'spin', 'idle'];
const image = () =>
  harnessImage(manifestWithTools(TOOLS), {
    tools: {
      fail: { kind: 'const', envelope: { error: 'no' } },
      spin: { kind: 'wat', body: '(loop $forever (br $forever)) (i64.const 0)' },
    },
  });

/** The spinning tool's time limit: every call of it lasts at least this long. */
const TIMEOUT_MS = 300;

describe('live figures', { timeout: 60_000 }, () => {
  let dir: string;
  let d: RunningDaemon;
  let tokens: Record<string, string>;
  let c: McpConnection;

  beforeAll(async () => {
    dir = await tempDir();
    const access = await writeAccess(dir, [
      { name: 'operator', scopes: ['berm:read', 'berm:deploy', 'berm:call'] },
      { name: 'reader', scopes: ['berm:read'] },
      { name: 'caller', scopes: ['berm:call'] },
      { name: 'narrow', scopes: ['berm:call:elsewhere'] },
    ]);
    tokens = access.tokens;
    d = await startDaemon({ stateDir: path.join(dir, 'state'), args: ['--access', access.file], env: { OTEL_SDK_DISABLED: 'true' } });
    c = await connect(d.url, bearer(tokens.caller!));
  });

  /** Deploys the test's harness as `name` (each test its own, so none counts another's calls). */
  async function deployAs(name: string, query = ''): Promise<void> {
    const put = await as(tokens.operator, `${d.url}/harnesses/${name}${query}`, {
      method: 'PUT',
      body: await image(),
      headers: { 'content-type': 'application/wasm' },
    });
    expect(put.status).toBe(201);
  }

  afterAll(async () => {
    await c?.close().catch(() => {});
    await d?.stop();
    await removeDir(dir);
  });

  const call = async (name: string, args: Record<string, unknown>) =>
    (await c.client.callTool({ name, arguments: args })) as CallToolResult;

  async function figuresOf(name: string, token = tokens.reader): Promise<HarnessFigures> {
    const res = await as(token, `${d.url}/harnesses/${name}/figures`);
    expect(res.status).toBe(200);
    return (await res.json()) as HarnessFigures;
  }

  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

  it('counts each tool’s calls by kind, since start and over the last minute, with metrics off', async () => {
    // OpenTelemetry is off in this bermd: the figures are kept all the same.
    expect((await as(tokens.reader, `${d.url}/metrics`)).status).toBe(404);
    await deployAs('counted', `?timeout=${TIMEOUT_MS}ms`);
    const before = await figuresOf('counted');
    expect(before.tools.map((t) => [t.name, t.since_start.calls])).toEqual(TOOLS.map((t) => [t, 0]));

    for (let i = 0; i < 3; i++) expect((await call('counted.ok', { query: `q${i}` })).isError).toBeFalsy();
    for (let i = 0; i < 2; i++) expect((await call('counted.fail', { query: 'x' })).isError).toBe(true);
    // Arguments the schema refuses: nothing ran.
    expect((await call('counted.ok', { query: 42 })).isError).toBe(true);
    const timedOut = await call('counted.spin', { query: 'x' });
    expect(JSON.stringify(timedOut)).toContain('timeout');
    // A name not deployed is counted nowhere here.
    await expect(call('counted.nothing', {})).rejects.toThrow();
    // A caller whose scope does not reach the harness: refused before the runtime, counted all the same.
    const narrow = await connect(d.url, bearer(tokens.narrow!));
    try {
      await expect(narrow.client.callTool({ name: 'counted.ok', arguments: { query: 'x' } })).rejects.toThrow();
    } finally {
      await narrow.close().catch(() => {});
    }

    const after = await figuresOf('counted');
    expect(after.percentile_error).toBeGreaterThan(0);
    expect(Date.parse(after.since)).not.toBeNaN();
    const tool = (name: string): ToolFigures => after.tools.find((t) => t.name === name)!;
    const none = { tool_error: 0, refused: 0, timeout: 0, memory: 0, result_too_large: 0, busy: 0, cancelled: 0, error: 0 };
    for (const window of ['since_start', 'last_minute'] as const) {
      expect(tool('ok')[window]).toMatchObject({ calls: 5, errors: { ...none, refused: 2 }, error_rate: 0.4 });
      expect(tool('fail')[window]).toMatchObject({ calls: 2, errors: { ...none, tool_error: 2 }, error_rate: 1 });
      expect(tool('spin')[window]).toMatchObject({ calls: 1, errors: { ...none, timeout: 1 }, error_rate: 1 });
      expect(tool('idle')[window]).toEqual({ calls: 0, errors: none, error_rate: null, p50_ms: null, p99_ms: null });
    }
    // The minute under way holds them all: eight calls, five failed.
    const hourOf = (name: string) => tool(name).last_hour;
    expect(hourOf('ok').calls).toHaveLength(60);
    expect(sum(TOOLS.map((t) => sum(hourOf(t).calls)))).toBe(8);
    expect(sum(TOOLS.map((t) => sum(hourOf(t).errors)))).toBe(5);

    // Durations: the timed-out call lasted at least its limit, which the answered ones were far below
    // (the refusal has none: it never got a worker).
    const err = after.percentile_error;
    const spin = tool('spin').last_minute;
    expect(spin.p50_ms).toBe(spin.p99_ms);
    expect(spin.p50_ms!).toBeGreaterThanOrEqual(TIMEOUT_MS * (1 - err));
    const ok = tool('ok').last_minute;
    expect(ok.p50_ms!).toBeLessThanOrEqual(ok.p99_ms!);
    expect(ok.p99_ms!).toBeLessThan(spin.p50_ms!);
    expect(tool('fail').since_start.p50_ms).not.toBeNull();

    // The list's summary: the same calls per minute, the harness's tools together.
    const res = await as(tokens.reader, `${d.url}/figures`);
    expect(res.status).toBe(200);
    const summary = (await res.json()) as FiguresSummary;
    const counted = summary.harnesses.find((h) => h.name === 'counted')!;
    expect(counted.last_hour.calls).toHaveLength(60);
    expect(sum(counted.last_hour.calls)).toBe(8);
    expect(sum(counted.last_hour.errors)).toBe(5);
  });

  it('tells a follower of GET /figures/events which harness a call moved', async () => {
    await deployAs('streamed');
    const abort = new AbortController();
    try {
      const res = await as(tokens.reader, `${d.url}/figures/events`, { signal: abort.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      const next = async (pattern: RegExp): Promise<RegExpExecArray> => {
        for (;;) {
          const found = pattern.exec(text);
          if (found !== null) {
            text = text.slice(found.index + found[0].length);
            return found;
          }
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended before ${pattern}`);
          text += value;
        }
      };
      await within('the subscription', next(/^: subscribed\n\n/));
      expect((await call('streamed.ok', { query: 'streamed' })).isError).toBeFalsy();
      // Events come at most every two seconds, and only when something moved; the one naming `streamed` is awaited.
      for (;;) {
        const [, data] = await within('a figures event naming streamed', next(/event: figures\ndata: (.*)\n\n/));
        const change = JSON.parse(data!) as FiguresChange;
        if (change.harnesses.includes('streamed')) break;
      }
    } finally {
      abort.abort();
    }
  });

  it('needs berm:read on every figures route', async () => {
    for (const route of ['/figures', '/harnesses/any/figures', '/figures/events']) {
      const unsigned = await as(undefined, `${d.url}${route}`);
      expect(unsigned.status, route).toBe(401);
      await unsigned.body?.cancel();
      const caller = await as(tokens.caller, `${d.url}${route}`);
      expect(caller.status, route).toBe(403);
      expect(await errorOf(caller)).toMatchObject({ code: 'insufficient-scope', scope: 'berm:read' });
    }
  });

  it('answers 404 not-found for a harness not deployed, and one undeployed has no figures left', async () => {
    const missing = await as(tokens.reader, `${d.url}/harnesses/nothing/figures`);
    expect(missing.status).toBe(404);
    expect(await errorOf(missing)).toEqual({
      code: 'not-found',
      message: 'no harness named nothing is deployed, so it has no figures',
      name: 'nothing',
    });
    const bad = await as(tokens.reader, `${d.url}/harnesses/Not%20A%20Name/figures`);
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).code).toBe('bad-name');

    await deployAs('brief');
    expect((await call('brief.ok', { query: 'once' })).isError).toBeFalsy();
    expect((await figuresOf('brief')).tools.find((t) => t.name === 'ok')!.since_start.calls).toBe(1);
    expect((await as(tokens.operator, `${d.url}/harnesses/brief`, { method: 'DELETE' })).status).toBe(204);
    expect((await as(tokens.reader, `${d.url}/harnesses/brief/figures`)).status).toBe(404);
    const summary = (await (await as(tokens.reader, `${d.url}/figures`)).json()) as FiguresSummary;
    expect(summary.harnesses.map((h) => h.name)).not.toContain('brief');
  });
});
