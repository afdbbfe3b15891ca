// bermd's metrics over OTLP/HTTP, to a stand-in collector: the push sends what GET /metrics reads (one
// storage read by both, when the exporter asks for cumulative temporality, its default), its sums cumulative
// and under bermd's resource; and an exporter asking for delta temporality gets deltas, from a reader of its
// own, which add up to what was called.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { removeDir, type RunningDaemon, startDaemon, tempDir } from './daemon.js';
import { connect, deploy } from './mcp-client.js';
import { OtlpReceiver, type ReceivedPoint } from './otlp-receiver.js';

const CUMULATIVE = 2;
const DELTA = 1;

const image = () => harnessImage(manifestWithTools(['ok', 'fail']), { tools: { fail: { kind: 'const', envelope: { error: 'no' } } } });

/** The points of `bermd.calls` for `harness` in one export, by `tool/outcome`. */
function callsIn(points: ReceivedPoint[], harness: string): Map<string, ReceivedPoint> {
  const out = new Map<string, ReceivedPoint>();
  for (const p of points)
    if (p.metric === 'bermd.calls' && p.attributes.harness === harness) out.set(`${p.attributes.tool}/${p.attributes.outcome}`, p);
  return out;
}

/** `bermd_calls_total` for `harness` in Prometheus' text, by `tool/outcome`. */
function callsInText(text: string, harness: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^bermd_calls_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (labels.harness === harness) out.set(`${labels.tool}/${labels.outcome}`, Number(m[2]));
  }
  return out;
}

async function callTools(url: string, harness: string, ok: number, failed: number): Promise<void> {
  const c = await connect(url);
  try {
    for (let i = 0; i < ok; i++)
      expect((await c.client.callTool({ name: `${harness}.ok`, arguments: { query: 'x' } })).isError).toBeFalsy();
    for (let i = 0; i < failed; i++)
      expect((await c.client.callTool({ name: `${harness}.fail`, arguments: { query: 'x' } })).isError).toBe(true);
  } finally {
    await c.close();
  }
}

describe('metrics over OTLP', { timeout: 60_000 }, () => {
  let receiver: OtlpReceiver;
  const dirs: string[] = [];
  const daemons: RunningDaemon[] = [];

  async function bermd(env: Record<string, string>): Promise<RunningDaemon> {
    const stateDir = await tempDir();
    dirs.push(stateDir);
    const d = await startDaemon({
      stateDir,
      env: { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`, OTEL_METRIC_EXPORT_INTERVAL: '100', ...env },
    });
    daemons.push(d);
    return d;
  }

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
  });

  afterAll(async () => {
    for (const d of daemons) await d.stop();
    for (const dir of dirs) await removeDir(dir);
    await receiver?.close();
  });

  it("pushes, cumulative, the counts GET /metrics reads, under bermd's resource", async () => {
    const d = await bermd({ OTEL_SERVICE_NAME: 'pushed-bermd' });
    await deploy(d.url, 'pushed', await image());
    await callTools(d.url, 'pushed', 3, 2);
    const text = await (await fetch(`${d.url}/metrics`)).text();
    const pulled = callsInText(text, 'pushed');
    expect(Object.fromEntries(pulled)).toEqual({ 'ok/ok': 3, 'fail/tool_error': 2 });
    // An export made after the calls carries the same counts, as running totals.
    const pushed = await receiver.untilPoints((exports) => {
      const last = exports.map((e) => callsIn(e, 'pushed')).findLast((c) => c.size > 0);
      return last !== undefined && last.get('ok/ok')?.value === 3 && last.get('fail/tool_error')?.value === 2 ? last : undefined;
    });
    expect(new Map([...pushed].map(([k, p]) => [k, p.value]))).toEqual(pulled);
    for (const p of pushed.values()) {
      expect(p.temporality).toBe(CUMULATIVE);
      expect(p.resource['service.name']).toBe('pushed-bermd');
    }
  });

  it('pushes deltas that add up to the calls made when the exporter asks for delta temporality', async () => {
    const d = await bermd({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'delta' });
    await deploy(d.url, 'delta', await image());
    await callTools(d.url, 'delta', 4, 1);
    const total = (exports: ReceivedPoint[][], key: string) =>
      exports.reduce((sum, e) => sum + (callsIn(e, 'delta').get(key)?.value ?? 0), 0);
    await receiver.untilPoints((exports) => (total(exports, 'ok/ok') === 4 && total(exports, 'fail/tool_error') === 1 ? true : undefined));
    const points = receiver.points.flatMap((e) => [...callsIn(e, 'delta').values()]);
    expect(points.length).toBeGreaterThan(0);
    expect(points.every((p) => p.temporality === DELTA)).toBe(true);
    // /metrics still reads running totals.
    const text = await (await fetch(`${d.url}/metrics`)).text();
    expect(Object.fromEntries(callsInText(text, 'delta'))).toEqual({ 'ok/ok': 4, 'fail/tool_error': 1 });
  });
});
