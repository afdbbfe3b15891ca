/**
 * Where bermd's spans go when they end: a worker thread of their own (export-worker.ts) that holds the
 * SDK's batch processor and OTLP exporter, unchanged. Encoding spans in OTLP and sending them is most of
 * what a fully sampled call adds to the main thread's work, and there it runs in one piece every few
 * hundred spans, holding up every request behind it. Here, the main thread only copies each span's data
 * (span-record.ts) and posts them in batches.
 *
 * This is the tracer provider's span processor, and timed spans (timed-span.ts) end into it too.
 */
import { Worker } from 'node:worker_threads';
import type { Attributes, Context } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ExportSetup, FromExporter, ToExporter } from './export-messages.js';
import { recordOf, type SpanRecord } from './span-record.js';
import type { TraceConfig } from './trace-config.js';

/**
 * Spans are posted in messages of this many, or what has ended within `POST_AFTER_MS` of the first
 * still held. Each message wakes the export thread: posting every turn of a busy event loop would spend
 * more on waking it than it saves the main thread, and no copy is long.
 */
const MOST_PER_MESSAGE = 256;
const POST_AFTER_MS = 50;

export class ExportThread implements SpanProcessor {
  private pending: SpanRecord[] = [];
  private timer?: NodeJS.Timeout;
  private asked = 0;
  private readonly answers = new Map<number, () => void>();
  /** The thread has exited: what ends from now on is dropped. */
  private gone = false;

  private constructor(private readonly thread: Worker) {
    thread.on('message', (message: FromExporter) => {
      if (message.kind !== 'done') return;
      this.answers.get(message.id)?.();
      this.answers.delete(message.id);
    });
    thread.on('exit', () => {
      this.gone = true;
      this.pending = [];
      for (const answered of this.answers.values()) answered();
      this.answers.clear();
    });
    // A failure once started (the thread's own error) ends the export, never bermd.
    thread.on('error', () => {});
    // It never keeps bermd running by itself: bermd's close flushes it (shutdown) before letting go.
    thread.unref();
  }

  /** The thread started, its exporter loaded; rejects with why when it could not start. */
  static async start(config: TraceConfig, resource: Attributes, scope: InstrumentationScope): Promise<ExportThread> {
    const setup: ExportSetup = { config, resource, scope };
    const thread = new Worker(new URL('./export-worker.js', import.meta.url), { workerData: setup });
    await new Promise<void>((resolve, reject) => {
      const failed = (e: Error): void => reject(new Error(`the span export thread failed to start: ${e.message}`));
      const exited = (code: number): void => reject(new Error(`the span export thread exited (${code}) before it started`));
      thread.once('error', failed);
      thread.once('exit', exited);
      thread.once('message', () => {
        thread.off('error', failed);
        thread.off('exit', exited);
        resolve();
      });
    });
    return new ExportThread(thread);
  }

  onStart(_span: Span, _parent: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.gone) return;
    this.pending.push(recordOf(span));
    if (this.pending.length >= MOST_PER_MESSAGE) this.post();
    else if (this.timer === undefined) this.timer = setTimeout(this.postHeld, POST_AFTER_MS).unref();
  }

  private readonly postHeld = (): void => {
    this.timer = undefined;
    this.post();
  };

  private post(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending.length === 0 || this.gone) return;
    const spans = this.pending;
    this.pending = [];
    this.send({ kind: 'spans', spans });
  }

  private send(message: ToExporter): void {
    this.thread.postMessage(message);
  }

  /** Resolves once every span ended so far is exported (or its export failed). */
  forceFlush(): Promise<void> {
    return this.ask('flush');
  }

  /** Exports what is left and stops the thread. */
  async shutdown(): Promise<void> {
    await this.ask('shutdown');
    await this.thread.terminate();
  }

  private ask(kind: 'flush' | 'shutdown'): Promise<void> {
    this.post();
    if (this.gone) return Promise.resolve();
    const id = ++this.asked;
    // Held while an answer is awaited, so that a bermd closing waits for its last spans to go out.
    this.thread.ref();
    return new Promise((resolve) => {
      this.answers.set(id, () => {
        if (this.answers.size === 1) this.thread.unref();
        resolve();
      });
      this.send({ kind, id });
    });
  }
}
