/**
 * The spans of a tool call whose times the worker measured (`bermd.queue`, `bermd.run`, `bermd.instantiate`,
 * `berm.call`): made whole on the main thread and handed to the span processor as the SDK's own spans are
 * when they end. They are not made through the SDK's `Tracer` because everything its spans do on top of
 * that is spent on what these never need: a sampling decision (a call's spans follow the request's span,
 * already decided), attributes sanitised and limited one by one (bermd sets a fixed few, all strings and
 * numbers), a clock read and converted at each start and end (the worker gave both times), events and
 * links, the span's registration with the processor when it starts. A profile of a fully sampled bermd put
 * those spans among the largest costs of a call on the main thread; what the processor and exporter do
 * with a span is unchanged, and `traces.test.ts` decodes what reaches a receiver.
 */
import {
  type Attributes,
  type HrTime,
  type Link,
  type SpanContext,
  SpanKind,
  type SpanStatus,
  SpanStatusCode,
  TraceFlags,
  type TraceState,
} from '@opentelemetry/api';
import { type InstrumentationScope, millisToHrTime } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { RandomIdGenerator, ReadableSpan, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** Where a timed span goes when it ends, and what it shares with every span of the tracer. */
export interface TimedSpanSink {
  readonly processor: SpanProcessor;
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
  readonly ids: RandomIdGenerator;
}

/** The time now in epoch milliseconds, to the sub-millisecond, on the clock the worker's times are on. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

const NO_LINKS: Link[] = [];
const NO_EVENTS: TimedEvent[] = [];
const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };
/** The end and duration of a span not ended yet. */
const NOT_ENDED: HrTime = [0, 0];

function duration(from: HrTime, to: HrTime): HrTime {
  let seconds = to[0] - from[0];
  let nanos = to[1] - from[1];
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1e9;
  }
  return [seconds, nanos];
}

/**
 * A sampled span from `startMs` (epoch ms) until `end`: INTERNAL under `parent` (a sampled span's context)
 * unless told otherwise, or the root of a trace of its own (`traceId` given, no parent).
 */
export class TimedSpan implements ReadableSpan {
  readonly links = NO_LINKS;
  readonly events = NO_EVENTS;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly startTime: HrTime;
  endTime: HrTime = NOT_ENDED;
  ended = false;
  status: SpanStatus = UNSET;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  private readonly context: SpanContext;
  protected readonly startMs: number;

  constructor(
    protected readonly sink: TimedSpanSink,
    readonly name: string,
    readonly parentSpanContext: SpanContext | undefined,
    readonly attributes: Attributes,
    startMs: number,
    readonly kind: SpanKind = SpanKind.INTERNAL,
    root?: { traceId: string; traceState?: TraceState },
  ) {
    this.startMs = startMs;
    this.startTime = millisToHrTime(startMs);
    this.resource = sink.resource;
    this.instrumentationScope = sink.scope;
    this.context = {
      traceId: parentSpanContext?.traceId ?? root!.traceId,
      spanId: sink.ids.generateSpanId(),
      traceFlags: TraceFlags.SAMPLED,
      traceState: parentSpanContext === undefined ? root?.traceState : parentSpanContext.traceState,
    };
  }

  spanContext(): SpanContext {
    return this.context;
  }

  /** Worked out when read (the exporters read the ends, not this): most spans are never asked. */
  get duration(): HrTime {
    return this.ended ? duration(this.startTime, this.endTime) : NOT_ENDED;
  }

  /** Ends the span at `atMs` (epoch ms; now when not given), as failed with `error` when given; only the first end counts. */
  end(atMs: number = now(), error?: { type: string; message?: string }): void {
    if (!this.close(atMs, error)) return;
    this.sink.processor.onEnd(this);
  }

  /** Ends the span without handing it to the processor; false when it had ended already. */
  protected close(atMs: number, error?: { type: string; message?: string }): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.endTime = millisToHrTime(Math.max(atMs, this.startMs));
    if (error !== undefined) {
      this.attributes['error.type'] = error.type;
      this.status = error.message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message: error.message };
    }
    return true;
  }

  /** A span from `startMs` to `endMs`, ended and never handed to the processor: one a `RunSpan` stands for. */
  static closed(sink: TimedSpanSink, name: string, parent: SpanContext, attributes: Attributes, startMs: number, endMs: number): TimedSpan {
    const span = new TimedSpan(sink, name, parent, attributes, startMs);
    span.close(endMs);
    return span;
  }
}

/**
 * A tool call's run on its worker (`bermd.run`), which also stands for the call's wait for the worker
 * (`bermd.queue`) and the instance it made first (`bermd.instantiate`) until its batch is written: those
 * two spans are made then (`expandRuns`), from the times kept here, rather than as the call goes. A call
 * then hands the batch processor one span rather than three, and holds two objects fewer while it runs.
 */
export class RunSpan extends TimedSpan {
  /** The first instance the call made at its own level: its harness, tool and times (epoch ms). */
  private instance?: { harness: string; tool: string; from: number; to: number };

  constructor(
    sink: TimedSpanSink,
    name: string,
    parent: SpanContext,
    attributes: Attributes,
    /** When the call began to wait for a worker (epoch ms). */
    private readonly queuedMs: number,
    startMs: number,
    private readonly harness: string,
  ) {
    super(sink, name, parent, attributes, startMs);
  }

  /** Keeps the call's first instance at its own level; false when one is kept already (the caller makes a span of its own). */
  instantiated(harness: string, tool: string, from: number, to: number): boolean {
    if (this.instance !== undefined) return false;
    this.instance = { harness, tool, from, to };
    return true;
  }

  /** The spans this one stands for, and itself: its wait, itself, its instance. */
  spans(): ReadableSpan[] {
    const parent = this.parentSpanContext!;
    const queue = TimedSpan.closed(this.sink, 'bermd.queue', parent, { 'berm.harness': this.harness }, this.queuedMs, this.startMs);
    const i = this.instance;
    if (i === undefined) return [queue, this];
    const attributes = { 'berm.harness': i.harness, 'berm.tool': i.tool, 'berm.call.depth': 0 };
    return [queue, this, TimedSpan.closed(this.sink, 'bermd.instantiate', this.spanContext(), attributes, i.from, i.to)];
  }
}

/** `spans`, each `RunSpan` among them replaced by the spans it stands for. */
export function expandRuns(spans: ReadableSpan[]): ReadableSpan[] {
  const out: ReadableSpan[] = [];
  for (const span of spans) {
    if (span instanceof RunSpan) out.push(...span.spans());
    else out.push(span);
  }
  return out;
}
