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
  private readonly startMs: number;

  constructor(
    private readonly sink: TimedSpanSink,
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
    if (this.ended) return;
    this.ended = true;
    this.endTime = millisToHrTime(Math.max(atMs, this.startMs));
    if (error !== undefined) {
      this.attributes['error.type'] = error.type;
      this.status = error.message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message: error.message };
    }
    this.sink.processor.onEnd(this);
  }
}
