// bermd's OTLP/protobuf span serializer against the SDK's, which it replaces: for the same spans, the same
// bytes. The spans are made by the SDK's tracer (every kind, status, events, links, a remote parent, trace
// state, two resources and two scopes) and by bermd's own timed spans (values the SDK's tracer would not
// let through: bytes, nested objects, null), with strings ASCII and not, ids in both cases of hex, and
// messages long enough that their lengths take two and three bytes.
import { type Attributes, context, type Link, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  RandomIdGenerator,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { encodeSpans } from '../dist/telemetry/span-protobuf.js';
import { TimedSpan } from '../dist/telemetry/timed-span.js';

const VALUES: Attributes = {
  ascii: 'tools/call echo.echo',
  empty: '',
  accented: 'café crème',
  emoji: 'stack 🥞 of calls',
  cjk: '呼び出し',
  loneSurrogate: 'half \ud800 a pair',
  'clé non ascii': 'value',
  yes: true,
  no: false,
  zero: 0,
  small: 127,
  twoBytes: 128,
  int31: 2 ** 31,
  int32: 2 ** 32,
  int53: 2 ** 53,
  int62: 2 ** 62,
  negative: -1,
  negativeLarge: -(2 ** 40),
  fraction: 1.5,
  negativeFraction: -0.25,
  tiny: Number.MIN_VALUE,
  huge: 2 ** 70,
  notANumber: Number.NaN,
  infinity: Number.POSITIVE_INFINITY,
  numbers: [1, -2, 3.5],
  strings: ['a', 'é', ''],
  booleans: [true, false],
  withHoles: ['x', null, undefined, 'y'],
  long: 'x'.repeat(200),
  longer: 'y'.repeat(20_000),
};

function sdkSpans(): ReadableSpan[] {
  const spans: ReadableSpan[] = [];
  for (const resource of [
    resourceFromAttributes({ 'service.name': 'one', 'service.version': '1.2.3', 'host.cores': 2 }),
    resourceFromAttributes(
      { 'service.name': 'two', 'deployment.environment.name': 'tést' },
      { schemaUrl: 'https://opentelemetry.io/schemas/1.30.0' },
    ),
  ]) {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracers = [
      provider.getTracer('bermd', '0.1.0'),
      provider.getTracer('other', undefined, { schemaUrl: 'https://example.com/schema' }),
    ];
    for (const tracer of tracers) {
      const remote = trace.setSpanContext(ROOT_CONTEXT, {
        traceId: '0AF7651916CD43DD8448EB211C80319C'.toLowerCase(),
        spanId: 'b7ad6b7169203331',
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
        traceState: new TraceState('vendor=1,other=two'),
      });
      const server = tracer.startSpan('tools/call echo.echo', { kind: SpanKind.SERVER, attributes: VALUES }, remote);
      const under = trace.setSpan(remote, server);
      const links: Link[] = [
        { context: server.spanContext() },
        {
          context: {
            traceId: 'ABCDEF0123456789ABCDEF0123456789',
            spanId: 'ABCDEF0123456789',
            traceFlags: 0,
            isRemote: true,
            traceState: new TraceState('k=v'),
          },
          attributes: { why: 'retried', attempt: 2 },
          droppedAttributesCount: 3,
        },
      ];
      for (const kind of [SpanKind.INTERNAL, SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER]) {
        const child = tracer.startSpan(`child ${kind}`, { kind, links, startTime: [1_700_000_000, 999_999_999] }, under);
        child.addEvent('plain', [1_700_000_000, 5]);
        child.addEvent('with attributes', { reason: 'ünïcode', count: 7, ok: true }, [2 ** 33, 123]);
        child.setStatus(
          kind === SpanKind.CLIENT ? { code: SpanStatusCode.ERROR, message: 'échec: the upstream said 503' } : { code: SpanStatusCode.OK },
        );
        child.end([1_700_000_001, 0]);
      }
      context.with(under, () => tracer.startSpan('unset status').end());
      server.setStatus({ code: SpanStatusCode.ERROR });
      server.end();
    }
    spans.push(...exporter.getFinishedSpans());
  }
  return spans;
}

function timedSpans(): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const sink = {
    processor: { onStart() {}, onEnd: (span: ReadableSpan) => ended.push(span), forceFlush: async () => {}, shutdown: async () => {} },
    resource: resourceFromAttributes({ 'service.name': 'bermd' }),
    scope: { name: 'bermd', version: '0.1.0' },
    ids: new RandomIdGenerator(),
  };
  const root = new TimedSpan(sink, 'tools/call a.call', undefined, { 'mcp.method.name': 'tools/call' }, Date.now(), SpanKind.SERVER, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    traceState: new TraceState('congo=t61rcWkgMzE'),
  });
  const parent = root.spanContext();
  const odd = {
    bytes: new Uint8Array([0, 1, 254, 255]),
    nested: { harness: 'a', depth: 2, deeper: { list: [1, 'two'] } },
    nothing: null,
    missing: undefined,
  } as unknown as Attributes;
  new TimedSpan(sink, 'bermd.queue', parent, { 'berm.harness': 'a' }, Date.now() - 5).end();
  new TimedSpan(sink, 'bermd.instantiate', parent, odd, Date.now() - 3).end(Date.now(), { type: 'trap', message: 'unreachable exécuté' });
  new TimedSpan(sink, 'bermd.run a.call', parent, { 'berm.harness': 'a', 'berm.tool': 'call', long: 'z'.repeat(300) }, 1.5).end(2.25);
  root.end();
  return ended;
}

function sdkBytes(spans: ReadableSpan[]): Buffer {
  return Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
}

describe("bermd's span serializer", () => {
  it('writes the bytes the SDK writes, for spans of every shape the SDK makes', () => {
    const spans = sdkSpans();
    expect(spans.length).toBeGreaterThan(20);
    expect(Buffer.from(encodeSpans(spans))).toEqual(sdkBytes(spans));
  });

  it("writes the bytes the SDK writes for bermd's timed spans, values the tracer would not pass included", () => {
    const spans = timedSpans();
    expect(spans).toHaveLength(4);
    expect(Buffer.from(encodeSpans(spans))).toEqual(sdkBytes(spans));
  });

  it('writes a batch larger than its first guess, spans of both kinds interleaved, as the SDK does', () => {
    const sdk = sdkSpans();
    const timed = timedSpans();
    const batch: ReadableSpan[] = [];
    for (let i = 0; i < 200; i++) batch.push(sdk[i % sdk.length]!, timed[i % timed.length]!);
    const bytes = Buffer.from(encodeSpans(batch));
    expect(bytes.length).toBeGreaterThan(batch.length * 384);
    // Compared whole rather than element by element: the batch is megabytes.
    const expected = sdkBytes(batch);
    expect(bytes.length).toBe(expected.length);
    expect(bytes.equals(expected)).toBe(true);
  });

  it('writes an empty request for no spans', () => {
    expect(encodeSpans([])).toHaveLength(0);
    expect(sdkBytes([])).toHaveLength(0);
  });
});
