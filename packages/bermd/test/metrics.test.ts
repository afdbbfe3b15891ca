// bermd's health and metrics through a real daemon: calls made with the official MCP SDK client are
// counted per harness, tool and outcome on GET /metrics, whose text promtool accepts; a real Prometheus
// server scraping --metrics-listen finds the same counter; /metrics needs berm:read where principals are
// configured while the probes need no token; a foreign Host is refused on both listeners; and /readyz
// follows a PostgreSQL store going away and coming back.
import { spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../../../test/helpers/loopback.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { type PostgresServer, startPostgres } from '../../../test/helpers/postgres-server.js';
import { as, bearer, errorOf, writeAccess } from './access.js';
import { removeDir, type RunningDaemon, startDaemon, tempDir } from './daemon.js';
import { connect, deploy, type McpConnection, valueOf } from './mcp-client.js';
import { describePostgres } from './postgres.js';
import { rawRequest } from './raw-http.js';
import { until, within } from './replicas.js';

/** promtool and prometheus come with Debian's `prometheus` package; CI installs it and requires them (.ci/run). */
const REQUIRE_PROMETHEUS = process.env.BERM_REQUIRE_PROMETHEUS === '1';
const hasCommand = (name: string): boolean => spawnSync(name, ['--version'], { stdio: 'ignore' }).error === undefined;
const PROMETHEUS = hasCommand('promtool') && hasCommand('prometheus');
if (!PROMETHEUS && REQUIRE_PROMETHEUS)
  throw new Error('BERM_REQUIRE_PROMETHEUS=1, and promtool or prometheus is missing: apt-get install prometheus');
const itWithPrometheus = PROMETHEUS ? it : it.skip;
const PROMETHEUS_MISSING = PROMETHEUS ? '' : ' (skipped: promtool or prometheus is not installed; apt-get install prometheus)';

const TOOLS = ['ok', 'fail', 'spin'];
const image = () =>
  harnessImage(manifestWithTools(TOOLS), {
    tools: {
      fail: { kind: 'const', envelope: { error: 'no' } },
      spin: { kind: 'wat', body: '(loop $forever (br $forever)) (i64.const 0)' },
    },
  });

interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of `name` in Prometheus' text format. */
function samples(text: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample of `name` whose labels include `want` (a label wanted as null: absent); 0 when there is none. */
function valueWith(text: string, name: string, want: Record<string, string | null>): number {
  const found = samples(text, name).filter((s) => Object.entries(want).every(([k, v]) => (s.labels[k] ?? null) === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(want)}`);
  return found[0]?.value ?? 0;
}

describe('metrics and health', { timeout: 60_000 }, () => {
  let dir: string;
  let d: RunningDaemon;
  let metricsUrl: string;
  let tokens: Record<string, string>;
  const sessions: McpConnection[] = [];

  beforeAll(async () => {
    dir = await tempDir();
    const access = await writeAccess(dir, [
      { name: 'operator', scopes: ['berm:read', 'berm:deploy', 'berm:call'] },
      { name: 'reader', scopes: ['berm:read'] },
      { name: 'caller', scopes: ['berm:call'] },
    ]);
    tokens = access.tokens;
    d = await startDaemon({ stateDir: path.join(dir, 'state'), args: ['--access', access.file, '--metrics-listen', ':0'] });
    const line = await d.waitForLog((e) => e.msg === 'serving /metrics for a scraper, without a token');
    metricsUrl = line.metrics as string;
  });

  afterAll(async () => {
    await d?.stop();
    await removeDir(dir);
  });

  afterEach(async () => {
    for (const c of sessions.splice(0)) await c.close().catch(() => {});
  });

  async function session(): Promise<McpConnection> {
    const c = await connect(d.url, bearer(tokens.caller!));
    sessions.push(c);
    return c;
  }

  async function metricsText(): Promise<string> {
    const res = await as(tokens.reader, `${d.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  }

  const call = async (c: McpConnection, name: string, args: Record<string, unknown>) =>
    (await c.client.callTool({ name, arguments: args })) as CallToolResult;

  it('counts calls per harness, tool and outcome, with queue wait and run time per harness', async () => {
    // The spinning tool's own time limit, so the other calls keep the daemon's.
    const put = await as(tokens.operator, `${d.url}/harnesses/counted?timeout=300ms`, {
      method: 'PUT',
      body: await image(),
      headers: { 'content-type': 'application/wasm' },
    });
    expect(put.status).toBe(201);
    const c = await session();
    for (let i = 0; i < 3; i++) expect(valueOf(await call(c, 'counted.ok', { query: `q${i}` }))).toEqual({ query: `q${i}` });
    for (let i = 0; i < 2; i++) expect((await call(c, 'counted.fail', { query: 'x' })).isError).toBe(true);
    // Arguments that do not match the tool's schema: refused, nothing ran.
    expect((await call(c, 'counted.ok', { query: 42 })).isError).toBe(true);
    const timedOut = await call(c, 'counted.spin', { query: 'x' });
    expect(timedOut.isError).toBe(true);
    expect(JSON.stringify(timedOut)).toContain('timeout');
    // A tool that is not deployed: counted, under no harness or tool label.
    await expect(call(c, 'counted.nothing', {})).rejects.toThrow();

    const text = await metricsText();
    const calls = (tool: string, outcome: string) => valueWith(text, 'bermd_calls_total', { harness: 'counted', tool, outcome });
    expect(calls('ok', 'ok')).toBe(3);
    expect(calls('fail', 'tool_error')).toBe(2);
    expect(calls('ok', 'refused')).toBe(1);
    expect(calls('spin', 'timeout')).toBe(1);
    expect(samples(text, 'bermd_calls_total').some((s) => s.labels.tool === 'nothing' || s.labels.harness === 'nothing')).toBe(false);
    expect(samples(text, 'bermd_calls_total').some((s) => s.labels.outcome === 'refused' && s.labels.harness === undefined)).toBe(true);
    // Every call that got a worker ran on one: three answered, two failed, one timed out.
    expect(valueWith(text, 'bermd_call_run_duration_count', { harness: 'counted' })).toBe(6);
    expect(valueWith(text, 'bermd_call_queue_duration_count', { harness: 'counted' })).toBe(6);
    // The MCP conventions' operation duration, the tool named only when it is listed.
    expect(
      valueWith(text, 'mcp_server_operation_duration_count', {
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'counted.ok',
        error_type: null,
      }),
    ).toBe(3);
    // The refused call answered a tool error.
    expect(
      valueWith(text, 'mcp_server_operation_duration_count', {
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'counted.ok',
        error_type: 'tool_error',
      }),
    ).toBe(1);
    expect(
      valueWith(text, 'mcp_server_operation_duration_count', {
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'counted.fail',
        error_type: 'tool_error',
      }),
    ).toBe(2);
    expect(valueWith(text, 'bermd_deploys_total', { action: 'deploy' })).toBeGreaterThanOrEqual(1);
    expect(valueWith(text, 'bermd_mcp_sessions', {})).toBeGreaterThanOrEqual(1);
    // No session id, principal or argument in any label.
    expect(text).not.toContain('caller');
    expect(text).not.toContain('q0');
  });

  itWithPrometheus(`serves text that promtool accepts${PROMETHEUS_MISSING}`, async () => {
    const c = await session();
    await deploy(d.url, 'linted', await image(), bearer(tokens.operator!));
    valueOf(await call(c, 'linted.ok', { query: 'x' }));
    const text = await metricsText();
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('asks berm:read for /metrics, no token for /healthz and /readyz, and serves /metrics alone without a token on --metrics-listen', async () => {
    const none = await fetch(`${d.url}/metrics`);
    expect(none.status).toBe(401);
    expect((await errorOf(none)).code).toBe('unauthorized');
    const caller = await as(tokens.caller, `${d.url}/metrics`);
    expect(caller.status).toBe(403);
    expect(await errorOf(caller)).toMatchObject({ code: 'insufficient-scope', scope: 'berm:read' });

    const health = await fetch(`${d.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${d.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });

    const scraped = await fetch(metricsUrl);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('# TYPE bermd_workers_busy gauge');
    const other = await fetch(new URL('/healthz', metricsUrl));
    expect(other.status).toBe(404);
    const control = await fetch(new URL('/harnesses', metricsUrl));
    expect(control.status).toBe(404);
  });

  it('refuses a foreign Host on both listeners, probes included', async () => {
    for (const [base, where] of [
      [d.url, '/readyz'],
      [d.url, '/healthz'],
      [d.url, '/metrics'],
      [metricsUrl, '/metrics'],
    ] as const) {
      const answer = await rawRequest(base, { path: where, headers: { host: 'evil.example' } });
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body).error.code).toBe('forbidden-host');
    }
  });

  itWithPrometheus(`is scraped by a real Prometheus server from --metrics-listen${PROMETHEUS_MISSING}`, async () => {
    const c = await session();
    await deploy(d.url, 'scraped', await image(), bearer(tokens.operator!));
    for (let i = 0; i < 4; i++) valueOf(await call(c, 'scraped.ok', { query: 'x' }));
    const promDir = await tempDir('bermd-prometheus-');
    const port = await closedPort();
    const target = new URL(metricsUrl);
    await writeFile(
      path.join(promDir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: bermd\n    static_configs:\n      - targets: ['${target.host}']\n`,
    );
    const prometheus = spawn(
      'prometheus',
      [
        `--config.file=${path.join(promDir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(promDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    prometheus.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    const exited = new Promise<void>((resolve) => prometheus.once('exit', () => resolve()));
    try {
      const query = encodeURIComponent('bermd_calls_total{harness="scraped",tool="ok",outcome="ok"}');
      const value = await until('Prometheus to scrape bermd_calls_total', async () => {
        if (prometheus.exitCode !== null) throw new Error(`prometheus exited: ${log}`);
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${query}`);
        const body = (await res.json()) as { data: { result: Array<{ value: [number, string] }> } };
        return body.data.result[0]?.value[1];
      });
      expect(Number(value)).toBe(4);
    } finally {
      prometheus.kill('SIGTERM');
      await within('prometheus to stop', exited);
      await removeDir(promDir);
    }
  });
});

describePostgres('readiness with a PostgreSQL store', { timeout: 120_000 }, () => {
  let pg: PostgresServer | undefined;
  let d: RunningDaemon | undefined;

  afterAll(async () => {
    await d?.stop();
    await pg?.remove();
  });

  it('turns 503 while the store is stopped and 200 when it is back', async () => {
    pg = await startPostgres();
    d = await startDaemon({ store: pg.url, args: ['--reconcile-interval', '0'] });
    const readyz = async () => {
      const res = await fetch(`${d!.url}/readyz`);
      return { status: res.status, body: (await res.json()) as { status: string; reason?: string } };
    };
    expect(await until('bermd to be ready', async () => ((await readyz()).status === 200 ? true : undefined))).toBe(true);

    await pg.stop('fast');
    await within(
      'the lost notifications',
      d.waitForLog((e) => typeof e.msg === 'string' && e.msg.startsWith("lost the store's notifications")),
    );
    const down = await readyz();
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('unready');
    expect(down.body.reason).toContain('the store does not answer');
    // The process still serves.
    expect((await fetch(`${d.url}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    expect(valueWith(metrics, 'bermd_store_reachable', { kind: 'postgres' })).toBe(0);

    await pg.start();
    await until('bermd to be ready again', async () => ((await readyz()).status === 200 ? true : undefined));
    const back = await (await fetch(`${d.url}/metrics`)).text();
    expect(valueWith(back, 'bermd_store_reachable', { kind: 'postgres' })).toBe(1);
  });
});
