/**
 * The span exporter bermd's batch processor hands its batches to. A batch is serialized here, on the
 * main thread, where its spans are, and its bytes go to a thread of their own (export-worker.ts), which
 * sends them with the SDK's OTLP/HTTP export delegate: the environment's headers, timeout, compression and
 * certificates, the retries, the reading of the answer, all as the SDK's exporter does them. The batch
 * processor learns each batch's outcome when the thread has it, so its flushes, its one export at a time
 * and bermd's flush at stop mean what they meant. A call's run in a batch stands for its wait and its
 * instance too (timed-span.ts, `RunSpan`): they are made here, as the batch is serialized.
 *
 * Why a thread: the main thread serves every request, and what an export does on the network (a
 * connection, TLS to a collector over https, the request's writes, its answer's parsing) is work it then
 * does not do for them. An HTTP client in the same thread also runs through Node's HTTP and stream code,
 * which the server's requests share: those functions then see the client's objects beside the server's,
 * and run slower for both (docs/decisions.md, "Traces: sent from a thread of their own"). Only the bytes
 * cross, once a batch, moved rather than copied.
 */
import { Worker } from 'node:worker_threads';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { expandRuns } from './timed-span.js';
import type { TraceProtocol } from './trace-config.js';

/** What the sending thread is started with. */
export interface ExportThreadData {
  /** The collector's traces URL. */
  url: string;
  protocol: TraceProtocol;
}

/** A batch to send: its bytes (a buffer of their own) and how many spans they hold. */
export interface ExportRequest {
  id: number;
  body: Uint8Array;
  spans: number;
}

/** What became of a batch: sent, or failed with `error`'s message. */
export interface ExportReply {
  id: number;
  ok: boolean;
  error?: string;
}

const SCRIPT = new URL('./export-worker.js', import.meta.url);

export class ThreadSpanExporter implements SpanExporter {
  private thread?: Worker;
  private next = 0;
  /** The batches sent and not yet answered, by id: their processor's callbacks. */
  private readonly waiting = new Map<number, (result: ExportResult) => void>();
  private drained: (() => void)[] = [];
  private stopped = false;

  /**
   * `serialize` writes a batch's request: into a buffer of its own, which is moved to the thread and
   * must not be read here again.
   */
  constructor(
    private readonly serialize: (spans: ReadableSpan[]) => Uint8Array | undefined,
    private readonly data: ExportThreadData,
  ) {}

  export(batch: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('the trace exporter has stopped') });
      return;
    }
    const spans = expandRuns(batch);
    const body = this.serialize(spans);
    if (body === undefined) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('nothing to send') });
      return;
    }
    const id = this.next++;
    const thread = this.started();
    try {
      thread.postMessage({ id, body, spans: spans.length } satisfies ExportRequest, [body.buffer as ArrayBuffer]);
    } catch (e) {
      // Bytes that cannot be moved (a shared buffer) never reach the thread: the batch fails here.
      resultCallback({
        code: ExportResultCode.FAILED,
        error: new Error(`the batch could not be handed to the export thread: ${(e as Error).message}`),
      });
      return;
    }
    this.waiting.set(id, resultCallback);
    // Held open while a batch is on its way, as the request would hold it were it sent from here.
    if (this.waiting.size === 1) thread.ref();
  }

  /** Resolves once every batch handed over has its answer. */
  forceFlush(): Promise<void> {
    if (this.waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  /** Waits for the batches on their way, then ends the thread; later batches fail. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    await this.forceFlush();
    const thread = this.thread;
    this.thread = undefined;
    await thread?.terminate();
  }

  /** The thread, started now if none runs (none has yet, or the last one ended). */
  private started(): Worker {
    if (this.thread !== undefined) return this.thread;
    const thread = new Worker(SCRIPT, { workerData: this.data satisfies ExportThreadData, name: 'bermd trace export' });
    thread.unref();
    thread.on('message', (reply: ExportReply) => {
      const done = this.waiting.get(reply.id);
      if (done === undefined) return;
      this.answered(reply.id);
      done(reply.ok ? { code: ExportResultCode.SUCCESS } : { code: ExportResultCode.FAILED, error: new Error(reply.error) });
    });
    let failure: unknown;
    thread.on('error', (e) => {
      failure = e;
    });
    thread.on('exit', (code) => {
      if (this.thread === thread) this.thread = undefined;
      // Its batches will not be answered: they fail, and the next batch starts another thread.
      const why = failure instanceof Error ? failure.message : `exited with code ${code}`;
      for (const [id, done] of [...this.waiting]) {
        this.answered(id);
        done({ code: ExportResultCode.FAILED, error: new Error(`the trace export thread stopped: ${why}`) });
      }
    });
    this.thread = thread;
    return thread;
  }

  private answered(id: number): void {
    this.waiting.delete(id);
    if (this.waiting.size > 0) return;
    this.thread?.unref();
    for (const resolve of this.drained.splice(0)) resolve();
  }
}
