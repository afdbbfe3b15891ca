// A call's run span, which stands for the call's wait and its first instance until its batch is written:
// the batch processor is handed one span, and the spans it stands for come out of `expandRuns` with the
// parents, times and attributes they would have had if made as the call went.
import { SpanKind } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { RandomIdGenerator, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { encodeSpans } from '../dist/telemetry/span-protobuf.js';
import { expandRuns, RunSpan, TimedSpan } from '../dist/telemetry/timed-span.js';

function sink(ended: ReadableSpan[]) {
  return {
    processor: { onStart() {}, onEnd: (span: ReadableSpan) => ended.push(span), forceFlush: async () => {}, shutdown: async () => {} },
    resource: resourceFromAttributes({ 'service.name': 'bermd' }),
    scope: { name: 'bermd', version: '0.1.0' },
    ids: new RandomIdGenerator(),
  };
}

const nanos = (span: ReadableSpan, which: 'startTime' | 'endTime') => BigInt(span[which][0]) * 1_000_000_000n + BigInt(span[which][1]);

describe('a run span', () => {
  it('reaches the processor alone, and expands to the wait, itself and its instance', () => {
    const ended: ReadableSpan[] = [];
    const s = sink(ended);
    const request = new TimedSpan(s, 'tools/call a.call', undefined, {}, 1_700_000_000_000, SpanKind.SERVER, {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    });
    const run = new RunSpan(
      s,
      'bermd.run a.call',
      request.spanContext(),
      { 'berm.harness': 'a', 'berm.tool': 'call' },
      1_700_000_000_001,
      1_700_000_000_003,
      'a',
    );
    expect(run.instantiated('a', 'call', 1_700_000_000_004, 1_700_000_000_006)).toBe(true);
    // A second instance at the call's own level is the caller's to make a span of.
    expect(run.instantiated('a', 'call', 1_700_000_000_007, 1_700_000_000_008)).toBe(false);
    run.end(1_700_000_000_010);
    request.end(1_700_000_000_011);
    expect(ended).toEqual([run, request]);

    const spans = expandRuns(ended);
    expect(spans.map((x) => x.name)).toEqual(['bermd.queue', 'bermd.run a.call', 'bermd.instantiate', 'tools/call a.call']);
    const [queue, same, instance, last] = spans as [ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan];
    expect(same).toBe(run);
    expect(last).toBe(request);

    expect(queue.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(queue.attributes).toEqual({ 'berm.harness': 'a' });
    expect(nanos(queue, 'startTime')).toBe(1_700_000_000_001_000_000n);
    expect(nanos(queue, 'endTime')).toBe(nanos(run, 'startTime'));

    expect(instance.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(instance.attributes).toEqual({ 'berm.harness': 'a', 'berm.tool': 'call', 'berm.call.depth': 0 });
    expect(nanos(instance, 'startTime')).toBe(1_700_000_000_004_000_000n);
    expect(nanos(instance, 'endTime')).toBe(1_700_000_000_006_000_000n);

    for (const span of spans) {
      expect(span.ended).toBe(true);
      expect(span.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    }
    expect(new Set(spans.map((x) => x.spanContext().spanId)).size).toBe(4);
    // The spans made are whole: bermd's encoder writes them as the SDK's serializer does.
    expect(Buffer.from(encodeSpans(spans))).toEqual(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!));
  });

  it('expands to its wait and itself when no instance was kept, and leaves other spans as they are', () => {
    const ended: ReadableSpan[] = [];
    const s = sink(ended);
    const request = new TimedSpan(s, 'tools/call b.x', undefined, {}, 1_000, SpanKind.SERVER, { traceId: 'a'.repeat(32) });
    const run = new RunSpan(s, 'bermd.run b.x', request.spanContext(), {}, 1_000, 1_002, 'b');
    run.end(1_005, { type: 'timeout', message: 'the call ran past its limit' });
    const other = new TimedSpan(s, 'berm.call c.y', run.spanContext(), {}, 1_003);
    other.end(1_004);
    const spans = expandRuns([other, run]);
    expect(spans.map((x) => x.name)).toEqual(['berm.call c.y', 'bermd.queue', 'bermd.run b.x']);
    // The run's failure is its own: the wait it stands for did not fail.
    expect(spans[2]!.attributes['error.type']).toBe('timeout');
    expect(spans[1]!.attributes['error.type']).toBeUndefined();
    expect(spans[1]!.status.code).toBe(0);
  });
});
