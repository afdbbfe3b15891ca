// bermd's own per-call instruments (telemetry/own-instruments.ts, call-instruments.ts) against the SDK's
// instruments they replace: the same records, from harnesses, tools, outcomes, methods and errors in a
// seeded random order, with harnesses forgotten and called again, values on and between bucket bounds, past
// the last bound, and negative; both collected as the SDK's metric data and both written as Prometheus text.
// Only the times differ.
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { millisToHrTime } from '@opentelemetry/core';
import { MeterProvider, type MetricData, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { BermdMetrics } from '../dist/telemetry/index.js';
import { idleGauges } from './core.js';

const PER_CALL = new Set(['bermd.calls', 'bermd.call.queue.duration', 'bermd.call.run.duration', 'mcp.server.operation.duration']);

/** A meter of its own and the metrics recorded on it, the per-call instruments bermd's (`own`) or the SDK's. */
function metricsOn(own: boolean) {
  const reader = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [reader] });
  const metrics = new BermdMetrics(provider.getMeter('bermd', '0'), idleGauges, own);
  return {
    metrics,
    /** The per-call metrics, by name, and the whole collection with bermd's own added as telemetry.ts adds them. */
    async collect(): Promise<{ perCall: MetricData[]; resourceMetrics: ResourceMetrics }> {
      const { resourceMetrics } = await reader.collect();
      const scope = resourceMetrics.scopeMetrics[0]!;
      scope.metrics.push(...metrics.ownData(millisToHrTime(Date.now())));
      scope.metrics.sort((a, b) => (a.descriptor.name < b.descriptor.name ? -1 : 1));
      return { perCall: scope.metrics.filter((m) => PER_CALL.has(m.descriptor.name)), resourceMetrics };
    },
    close: () => provider.shutdown(),
  };
}

/** A metric's data without its times, which say when each side happened to record and collect. */
function timeless(metric: MetricData): unknown {
  const { descriptor, dataPoints, ...rest } = metric;
  return {
    ...rest,
    descriptor: { ...descriptor },
    dataPoints: dataPoints.map(({ attributes, value }) => ({ attributes, value: structuredClone(value) })),
  };
}

/** A seeded generator, so a failure can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const CODES = [undefined, undefined, undefined, 'trap', 'timeout', 'unknown-tool', 'busy', 'memory-limit', 'made-up'];
const METHODS = ['tools/call', 'tools/list', 'initialize', 'ping', 'made/up', 42];
const ERRORS = [undefined, undefined, 'tool_error', '-32602', '404'];
/** Seconds on, between and past the call and MCP bounds, zero, and negative (not counted). */
const SECONDS = [0, 0.0001, 0.0005, 0.0007, 0.001, 0.01, 0.02, 0.3, 1, 2.5, 299, 300, 301, 1e6, -1];

describe("bermd's own per-call instruments", () => {
  it('collect what the SDK instruments collect from the same records, and write the same Prometheus text', async () => {
    const sdk = metricsOn(false);
    const own = metricsOn(true);
    try {
      const next = random(25);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
      const harnesses = ['a', 'b', 'c', undefined];
      for (let i = 0; i < 5000; i++) {
        const harness = pick(harnesses);
        const tool = harness === undefined || next() < 0.1 ? undefined : pick(['x', 'y', 'z']);
        const wait = next() < 0.2 ? undefined : pick(SECONDS);
        const run = next() < 0.2 ? undefined : pick(SECONDS);
        const code = pick(CODES);
        const method = pick(METHODS);
        const listed =
          harness !== undefined && tool !== undefined && method === 'tools/call' ? { name: `${harness}.${tool}`, harness } : undefined;
        const error = pick(ERRORS);
        const seconds = pick(SECONDS);
        const forget = next() < 0.01 ? pick(['a', 'b', 'c']) : undefined;
        for (const side of [sdk, own]) {
          side.metrics.callEnded(harness, tool, code, wait, run);
          side.metrics.operationEnded(method, seconds, listed, error);
          if (forget !== undefined) side.metrics.forget(forget);
        }
      }
      const [expected, actual] = await Promise.all([sdk.collect(), own.collect()]);
      expect(actual.perCall.map((m) => m.descriptor.name)).toEqual([...PER_CALL].sort());
      expect(actual.perCall.map(timeless)).toEqual(expected.perCall.map(timeless));
      // Each series' start is when it was made; its end, the collection's.
      for (const metric of actual.perCall)
        for (const { startTime, endTime } of metric.dataPoints)
          expect(endTime[0] > startTime[0] || (endTime[0] === startTime[0] && endTime[1] >= startTime[1])).toBe(true);
      const serializer = new PrometheusSerializer();
      expect(serializer.serialize(actual.resourceMetrics)).toBe(serializer.serialize(expected.resourceMetrics));
    } finally {
      await Promise.all([sdk.close(), own.close()]);
    }
  });

  it('keep at most as many series as the SDK, the rest counted in its overflow series', async () => {
    const sdk = metricsOn(false);
    const own = metricsOn(true);
    try {
      for (let i = 0; i < 2100; i++)
        for (const side of [sdk, own]) {
          side.metrics.callEnded('a', `tool-${i}`, undefined, 0.001, 0.001);
          side.metrics.callEnded('a', `tool-${i}`, undefined, 0.001, 0.001);
        }
      const [expected, actual] = await Promise.all([sdk.collect(), own.collect()]);
      const calls = actual.perCall.find((m) => m.descriptor.name === 'bermd.calls')!;
      expect(calls.dataPoints).toHaveLength(2000);
      expect(calls.dataPoints.at(-1)).toMatchObject({ attributes: { 'otel.metric.overflow': true }, value: 2 * 101 });
      expect(actual.perCall.map(timeless)).toEqual(expected.perCall.map(timeless));
    } finally {
      await Promise.all([sdk.close(), own.close()]);
    }
  });
});
