// The trace exporter that sends from a thread of its own (telemetry/export-thread.ts): what a stand-in
// collector receives and answers, the outcome each batch's callback is told, the environment's headers,
// a thread that stops with a batch on its way, and a shutdown that waits for the batches sent. The test's
// own thread makes no HTTP request while batches go out: Node's diagnostics channel for client requests
// tells the requests started in the thread that subscribes, and nothing else.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ThreadSpanExporter } from '../dist/telemetry/export-thread.js';
import { encodeSpans } from '../dist/telemetry/span-protobuf.js';

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A collector whose answers the test decides: each request waits for `answer` unless `status` is set. */
class Collector {
  readonly received: Received[] = [];
  status: number | undefined = 200;
  private held: ((status: number) => void)[] = [];
  private arrivals: (() => void)[] = [];

  private constructor(readonly server: Server) {}

  static async start(): Promise<Collector> {
    const server = createServer();
    const collector = new Collector(server);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => collector.onRequest(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return collector;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  /** Resolves once `count` requests have arrived. */
  async arrived(count: number): Promise<void> {
    while (this.received.length < count) await new Promise<void>((resolve) => this.arrivals.push(resolve));
  }

  /** Answers every request held so far with `status`. */
  answer(status: number): void {
    for (const send of this.held.splice(0)) send(status);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.received.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      for (const arrived of this.arrivals.splice(0)) arrived();
      const send = (status: number) => res.writeHead(status, { 'content-type': 'application/x-protobuf' }).end();
      if (this.status === undefined) this.held.push(send);
      else send(this.status);
    });
  }
}

/** `count` ended spans, made by the SDK's tracer. */
function spans(count: number, name = 'span'): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('test');
  for (let i = 0; i < count; i++) tracer.startSpan(`${name} ${i}`).end();
  return memory.getFinishedSpans();
}

/** Exports `batch` and resolves with what its callback was told. */
function exported(exporter: ThreadSpanExporter, batch: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(batch, resolve));
}

describe('the trace exporter thread', () => {
  let collector: Collector;
  let exporter: ThreadSpanExporter;
  beforeEach(async () => {
    collector = await Collector.start();
    exporter = new ThreadSpanExporter(encodeSpans, { url: collector.url, protocol: 'http/protobuf' });
  });
  afterEach(async () => {
    await exporter.shutdown();
    await collector.close();
  });

  it('sends each batch from its own thread, as encoded here, and tells each its outcome', async () => {
    const startedHere: unknown[] = [];
    const onRequest = (message: unknown) => startedHere.push(message);
    subscribe('http.client.request.start', onRequest);
    try {
      const first = spans(3, 'first');
      const second = spans(200, 'second');
      const expected = [Buffer.from(encodeSpans(first)), Buffer.from(encodeSpans(second))];
      const results = await Promise.all([exported(exporter, first), exported(exporter, second)]);
      expect(results.map((r) => r.code)).toEqual([ExportResultCode.SUCCESS, ExportResultCode.SUCCESS]);
      // One export at a time is the batch processor's rule, not the exporter's: both may be on their way at once.
      const bodies = collector.received.map((r) => r.body);
      expect(bodies).toHaveLength(2);
      expect(bodies.some((b) => b.equals(expected[0]!))).toBe(true);
      expect(bodies.some((b) => b.equals(expected[1]!))).toBe(true);
      expect(collector.received.every((r) => r.url === '/v1/traces' && r.headers['content-type'] === 'application/x-protobuf')).toBe(true);
      expect(startedHere).toEqual([]);
    } finally {
      unsubscribe('http.client.request.start', onRequest);
    }
  });

  it('fails a batch the collector refuses, with the status in its error', async () => {
    collector.status = 400;
    const result = await exported(exporter, spans(2));
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toBe('Bad Request (status 400)');
    collector.status = 200;
    expect((await exported(exporter, spans(1))).code).toBe(ExportResultCode.SUCCESS);
  });

  it('fails a batch whose bytes cannot be moved to the thread, and goes on', async () => {
    await exporter.shutdown();
    let shared = true;
    const serialize = (batch: ReadableSpan[]) => (shared ? new Uint8Array(new SharedArrayBuffer(8)) : encodeSpans(batch));
    exporter = new ThreadSpanExporter(serialize, { url: collector.url, protocol: 'http/protobuf' });
    const result = await exported(exporter, spans(1));
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toMatch(/could not be handed to the export thread/);
    shared = false;
    expect((await exported(exporter, spans(1))).code).toBe(ExportResultCode.SUCCESS);
    expect(collector.received).toHaveLength(1);
  });

  it('sends the headers the environment names, read by the SDK in the thread', async () => {
    await exporter.shutdown();
    const before = process.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS;
    process.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS = 'x-collector-key=k3y';
    try {
      exporter = new ThreadSpanExporter(encodeSpans, { url: collector.url, protocol: 'http/protobuf' });
      expect((await exported(exporter, spans(1))).code).toBe(ExportResultCode.SUCCESS);
      expect(collector.received.at(-1)?.headers['x-collector-key']).toBe('k3y');
    } finally {
      if (before === undefined) delete process.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS;
      else process.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS = before;
    }
  });

  it('fails the batches of a thread that stops, and sends the next from a new one', async () => {
    collector.status = undefined;
    const pending = exported(exporter, spans(2));
    await collector.arrived(1);
    // The thread is private: stopped here from outside, as a crash would stop it.
    await (exporter as unknown as { thread: { terminate(): Promise<number> } }).thread.terminate();
    const result = await pending;
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toMatch(/the trace export thread stopped/);
    collector.answer(200);
    collector.status = 200;
    expect((await exported(exporter, spans(1, 'after'))).code).toBe(ExportResultCode.SUCCESS);
    expect(collector.received).toHaveLength(2);
  });

  it('waits at shutdown for the batches on their way, and fails what comes after', async () => {
    collector.status = undefined;
    const told: string[] = [];
    const pending = exported(exporter, spans(4)).then((r) => told.push(`batch ${r.code}`));
    await collector.arrived(1);
    const stopped = exporter.shutdown().then(() => told.push('shut down'));
    // The shutdown cannot end before the collector answers: the batch's outcome is still to come.
    collector.answer(200);
    await Promise.all([pending, stopped]);
    expect(told).toEqual([`batch ${ExportResultCode.SUCCESS}`, 'shut down']);
    const late = await exported(exporter, spans(1));
    expect(late.code).toBe(ExportResultCode.FAILED);
    expect(late.error?.message).toMatch(/stopped/);
  });
});
