// The series BermdMetrics finds by label (telemetry/label-sets.ts), read back through the same Prometheus
// text /metrics serves: each harness, tool, outcome and error gets a series of its own however many came
// before it, and a harness forgotten at undeploy and deployed again goes on counting in its own series.
import { describe, expect, it } from 'vitest';
import { Telemetry } from '../dist/telemetry/index.js';
import { idleGauges } from './core.js';

/** The value of the sample of `name` whose labels are exactly `labels` (sorted by name, as the serializer writes them). */
function value(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]}"`)
    .join(',');
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const own = m[2]!
      .split(/,(?=[a-zA-Z_]+=")/)
      .filter((l) => !l.startsWith('otel_scope_'))
      .sort()
      .join(',');
    if (own === wanted) return Number(m[3]);
  }
  return undefined;
}

describe('metric labels kept once made', () => {
  it('gives each harness, tool and outcome its own series, and a harness forgotten and back its own again', async () => {
    const telemetry = await Telemetry.create({ version: '0', sources: idleGauges, env: {} });
    try {
      const m = telemetry.metrics;
      m.callEnded('a', 'x', undefined, 0.001, 0.002);
      m.callEnded('a', 'x', undefined, 0.001, 0.002);
      m.callEnded('a', 'y', 'trap', 0.001, 0.002);
      m.callEnded('b', 'x', undefined, 0.001, 0.002);
      m.callEnded('a', undefined, 'unknown-tool');
      m.callEnded(undefined, undefined, 'unknown-tool');
      m.operationEnded('tools/call', 0.01, { name: 'a.x', harness: 'a' });
      m.operationEnded('tools/call', 0.01, { name: 'a.x', harness: 'a' }, 'tool_error');
      m.operationEnded('tools/call', 0.01, { name: 'b.x', harness: 'b' });
      m.operationEnded('tools/call', 0.01, undefined, '-32602');
      m.operationEnded('tools/list', 0.01);
      m.operationEnded('made/up', 0.01, undefined, '404');

      let text = await telemetry.prometheusText();
      expect(value(text, 'bermd_calls_total', { harness: 'a', tool: 'x', outcome: 'ok' })).toBe(2);
      expect(value(text, 'bermd_calls_total', { harness: 'a', tool: 'y', outcome: 'tool_error' })).toBe(1);
      expect(value(text, 'bermd_calls_total', { harness: 'b', tool: 'x', outcome: 'ok' })).toBe(1);
      expect(value(text, 'bermd_calls_total', { harness: 'a', outcome: 'refused' })).toBe(1);
      expect(value(text, 'bermd_calls_total', { outcome: 'refused' })).toBe(1);
      expect(value(text, 'bermd_call_run_duration_count', { harness: 'a' })).toBe(3);
      expect(value(text, 'bermd_call_run_duration_count', { harness: 'b' })).toBe(1);
      const op = 'mcp_server_operation_duration_count';
      expect(value(text, op, { mcp_method_name: 'tools/call', gen_ai_tool_name: 'a.x' })).toBe(1);
      expect(value(text, op, { mcp_method_name: 'tools/call', gen_ai_tool_name: 'a.x', error_type: 'tool_error' })).toBe(1);
      expect(value(text, op, { mcp_method_name: 'tools/call', gen_ai_tool_name: 'b.x' })).toBe(1);
      expect(value(text, op, { mcp_method_name: 'tools/call', error_type: '-32602' })).toBe(1);
      expect(value(text, op, { mcp_method_name: 'tools/list' })).toBe(1);
      expect(value(text, op, { mcp_method_name: '_OTHER', error_type: '404' })).toBe(1);

      // Undeployed and deployed again: found anew, its series go on from where they were.
      m.forget('a');
      m.callEnded('a', 'x', undefined, 0.001, 0.002);
      m.operationEnded('tools/call', 0.01, { name: 'a.x', harness: 'a' });
      text = await telemetry.prometheusText();
      expect(value(text, 'bermd_calls_total', { harness: 'a', tool: 'x', outcome: 'ok' })).toBe(3);
      expect(value(text, 'bermd_call_run_duration_count', { harness: 'a' })).toBe(4);
      expect(value(text, op, { mcp_method_name: 'tools/call', gen_ai_tool_name: 'a.x' })).toBe(2);
      expect(value(text, 'bermd_calls_total', { harness: 'b', tool: 'x', outcome: 'ok' })).toBe(1);
    } finally {
      await telemetry.close();
    }
  });
});
