/**
 * A finished span as plain data, the form in which spans cross from bermd's main thread to its export
 * thread (export-thread.ts): what a `ReadableSpan` holds, with its contexts' trace states as text and
 * without its resource and scope, which the export thread holds once for every span.
 */
import type { Attributes, HrTime, Link, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
import { type InstrumentationScope, TraceState } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** A span context with its trace state as its header text. */
export interface ContextRecord {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: string;
  isRemote?: boolean;
}

export interface SpanRecord {
  name: string;
  kind: SpanKind;
  context: ContextRecord;
  parent?: ContextRecord;
  startTime: HrTime;
  endTime: HrTime;
  duration: HrTime;
  attributes: Attributes;
  status: SpanStatus;
  events?: TimedEvent[];
  links?: { context: ContextRecord; attributes?: Attributes; droppedAttributesCount?: number }[];
  /** Attributes, events and links dropped by the span's limits, when any were. */
  dropped?: [number, number, number];
}

function contextRecord(context: SpanContext): ContextRecord {
  const record: ContextRecord = { traceId: context.traceId, spanId: context.spanId, traceFlags: context.traceFlags };
  if (context.traceState !== undefined) record.traceState = context.traceState.serialize();
  if (context.isRemote === true) record.isRemote = true;
  return record;
}

function spanContextOf(record: ContextRecord): SpanContext {
  return {
    traceId: record.traceId,
    spanId: record.spanId,
    traceFlags: record.traceFlags,
    traceState: record.traceState === undefined ? undefined : new TraceState(record.traceState),
    isRemote: record.isRemote,
  };
}

/** `span` as a record; what it leaves out (resource, scope) is the tracer's, the same for every span. */
export function recordOf(span: ReadableSpan): SpanRecord {
  const record: SpanRecord = {
    name: span.name,
    kind: span.kind,
    context: contextRecord(span.spanContext()),
    startTime: span.startTime,
    endTime: span.endTime,
    duration: span.duration,
    attributes: span.attributes,
    status: span.status,
  };
  if (span.parentSpanContext !== undefined) record.parent = contextRecord(span.parentSpanContext);
  if (span.events.length > 0) record.events = span.events;
  if (span.links.length > 0)
    record.links = span.links.map((link) => ({
      context: contextRecord(link.context),
      attributes: link.attributes,
      droppedAttributesCount: link.droppedAttributesCount,
    }));
  if (span.droppedAttributesCount + span.droppedEventsCount + span.droppedLinksCount > 0)
    record.dropped = [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount];
  return record;
}

const NONE: never[] = [];

/** The span `record` was made of, under `resource` and `scope`, as the SDK's processors and exporters read one. */
export function readableOf(record: SpanRecord, resource: Resource, scope: InstrumentationScope): ReadableSpan {
  const context = spanContextOf(record.context);
  return {
    name: record.name,
    kind: record.kind,
    spanContext: () => context,
    parentSpanContext: record.parent === undefined ? undefined : spanContextOf(record.parent),
    startTime: record.startTime,
    endTime: record.endTime,
    duration: record.duration,
    status: record.status,
    attributes: record.attributes,
    links: record.links?.map((link): Link => ({ ...link, context: spanContextOf(link.context) })) ?? NONE,
    events: record.events ?? NONE,
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: record.dropped?.[0] ?? 0,
    droppedEventsCount: record.dropped?.[1] ?? 0,
    droppedLinksCount: record.dropped?.[2] ?? 0,
  };
}
