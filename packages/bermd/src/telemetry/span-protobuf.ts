/**
 * The OTLP/protobuf body of an `ExportTraceServiceRequest`, written from the SDK's `ReadableSpan`s: what
 * bermd's span exporter sends over OTLP/HTTP protobuf (export-thread.ts sends it with the SDK's delegate).
 *
 * Written here rather than taken from `@opentelemetry/otlp-transformer` because counting the main thread's
 * instructions in a bermd tracing every call found the SDK's `ProtobufTraceSerializer` the largest part of
 * what tracing adds to that thread (docs/decisions.md). It runs the whole encoding twice, once to estimate
 * the buffer's size; turns every trace and span id into a new `Uint8Array` on each pass; and reads each
 * string once to learn whether it is ASCII, then again to copy it. This writes each span once, straight
 * into the buffer: ids from their hex, strings copied as they are read (a string found not to be ASCII is
 * written again by `Buffer.write`), and a nested message's length written in front of it once its size is
 * known.
 *
 * The bytes are the SDK's, field for field and in the same order, so what a collector receives does not
 * depend on which serializer wrote it: `test/span-protobuf.test.ts` compares the two over spans using
 * every field and kind of value the SDK writes. The response is read by the SDK's own deserializer
 * (export-worker.ts).
 */
import type { Attributes, HrTime, Link, SpanContext, SpanStatus } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** Wire types. */
const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

/** OTLP's span flags: the context's trace flags, and that whether the parent is remote is known (and if so, that it is). */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

const INT64_MIN = -(2 ** 63);
const INT64_END = 2 ** 63;
const TWO_32 = 0x1_0000_0000;

/** A hex digit's value by its character code; ids are hex by the API's contract. */
const HEX = new Uint8Array(128);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[97 + i] = 10 + i;
  HEX[65 + i] = 10 + i;
}

/** The first guess at a request's size per span; the buffer doubles when a batch needs more. */
const BYTES_PER_SPAN = 384;

/**
 * The request's bytes, in a buffer of their own: never a slice of Node's shared pool, so the exporter can
 * hand the whole buffer over to the thread that sends it (export-thread.ts) without taking other bytes with it.
 */
class Writer {
  buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafeSlow(size);
  }

  /** Room for `n` more bytes. */
  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  tag(field: number, wire: number): void {
    this.varint32((field << 3) | wire);
  }

  /** A non-negative integer below 2^32. */
  varint32(value: number): void {
    this.room(5);
    const buf = this.buf;
    let p = this.pos;
    let v = value >>> 0;
    while (v > 0x7f) {
      buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[p++] = v;
    this.pos = p;
  }

  /** Any integer-valued number as a 64-bit varint (a negative one in two's complement, ten bytes). */
  varint64(value: number): void {
    if (value >= 0 && value < TWO_32) {
      this.varint32(value);
      return;
    }
    let low: number;
    let high: number;
    if (value >= 0) {
      low = value >>> 0;
      high = (value / TWO_32) >>> 0;
    } else {
      const magnitude = -value;
      low = ~(magnitude >>> 0) >>> 0;
      high = ~((magnitude / TWO_32) >>> 0) >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    this.room(10);
    const buf = this.buf;
    let p = this.pos;
    while (high > 0 || low > 0x7f) {
      buf[p++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[p++] = low;
    this.pos = p;
  }

  fixed32(value: number): void {
    this.room(4);
    this.uint32At(value, this.pos);
    this.pos += 4;
  }

  private uint32At(value: number, at: number): void {
    const buf = this.buf;
    buf[at] = value;
    buf[at + 1] = value >>> 8;
    buf[at + 2] = value >>> 16;
    buf[at + 3] = value >>> 24;
  }

  /** An `HrTime` as its nanoseconds since the epoch, a fixed64, split so that no product passes 2^53. */
  time(at: HrTime): void {
    const seconds = at[0];
    // seconds = upper * 2^16 + lower, so seconds * 1e9 = upper * 1e9 * 2^16 + lower * 1e9.
    const lower = seconds & 0xffff;
    const upper = Math.floor(seconds / 0x10000);
    const fromUpper = upper * 1e9;
    // fromUpper * 2^16 = (fromUpper's bits from 16 up) * 2^32 + (its low 16 bits) * 2^16.
    const sum = (fromUpper % 0x10000) * 0x10000 + lower * 1e9 + at[1];
    const low = sum >>> 0;
    const high = (Math.floor(fromUpper / 0x10000) + Math.floor(sum / TWO_32)) >>> 0;
    this.room(8);
    this.uint32At(low, this.pos);
    this.uint32At(high, this.pos + 4);
    this.pos += 8;
  }

  double(value: number): void {
    this.room(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** A string, length first: copied a character at a time while it is ASCII, else encoded by `Buffer.write`. */
  string(text: string): void {
    const n = text.length;
    this.varint32(n);
    this.room(n);
    const buf = this.buf;
    const start = this.pos;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c > 0x7f) {
        this.unicode(text, start);
        return;
      }
      buf[start + i] = c;
    }
    this.pos = start + n;
  }

  /** `text` written again from the length written before `start`, as UTF-8 (a lone surrogate as U+FFFD). */
  private unicode(text: string, start: number): void {
    this.pos = start - varintSize(text.length);
    const size = Buffer.byteLength(text, 'utf8');
    this.varint32(size);
    this.room(size);
    this.pos += this.buf.write(text, this.pos, 'utf8');
  }

  /** An id's bytes, from its hex, length first. */
  hex(id: string): void {
    const n = id.length >>> 1;
    this.varint32(n);
    this.room(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = (HEX[id.charCodeAt(2 * i)]! << 4) | HEX[id.charCodeAt(2 * i + 1)]!;
    this.pos = p;
  }

  bytes(value: Uint8Array): void {
    this.varint32(value.length);
    this.room(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** Where a nested message starts: one byte is kept for its length, the size of most. */
  open(): number {
    this.room(1);
    return this.pos++;
  }

  /** Writes the length of the message opened at `at`, moving the message on when its length needs more than one byte. */
  close(at: number): void {
    const length = this.pos - at - 1;
    if (length < 0x80) {
      this.buf[at] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.room(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    this.pos += extra;
    let v = length;
    let p = at;
    while (v > 0x7f) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
  }
}

function varintSize(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x20_0000) return 3;
  if (value < 0x1000_0000) return 4;
  return 5;
}

function writeAttributes(w: Writer, attributes: Attributes, field: number): void {
  for (const key in attributes) {
    if (!Object.hasOwn(attributes, key)) continue;
    w.tag(field, BYTES);
    const kv = w.open();
    w.tag(1, BYTES);
    w.string(key);
    w.tag(2, BYTES);
    const value = w.open();
    writeValue(w, attributes[key]);
    w.close(value);
    w.close(kv);
  }
}

/** An attribute's value as an `AnyValue`'s field: an integer in int64's range as `int_value`, another number as `double_value`. */
function writeValue(w: Writer, value: unknown): void {
  switch (typeof value) {
    case 'string':
      w.tag(1, BYTES);
      w.string(value);
      return;
    case 'boolean':
      w.tag(2, VARINT);
      w.varint32(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value) && value >= INT64_MIN && value < INT64_END) {
        w.tag(3, VARINT);
        w.varint64(value);
      } else {
        w.tag(4, FIXED64);
        w.double(value);
      }
      return;
  }
  if (value instanceof Uint8Array) {
    w.tag(7, BYTES);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    w.tag(5, BYTES);
    const array = w.open();
    for (const item of value) {
      w.tag(1, BYTES);
      const at = w.open();
      writeValue(w, item);
      w.close(at);
    }
    w.close(array);
  } else if (typeof value === 'object' && value !== null) {
    w.tag(6, BYTES);
    const list = w.open();
    writeAttributes(w, value as Attributes, 1);
    w.close(list);
  }
  // Anything else (undefined, null) is an empty value, as the SDK writes it.
}

function writeStatus(w: Writer, status: SpanStatus): void {
  const at = w.open();
  if (status.message) {
    w.tag(2, BYTES);
    w.string(status.message);
  }
  w.tag(3, VARINT);
  w.varint32(status.code);
  w.close(at);
}

function writeEvent(w: Writer, event: TimedEvent): void {
  const at = w.open();
  w.tag(1, FIXED64);
  w.time(event.time);
  w.tag(2, BYTES);
  w.string(event.name);
  if (event.attributes) writeAttributes(w, event.attributes, 3);
  w.tag(4, VARINT);
  w.varint32(event.droppedAttributesCount || 0);
  w.close(at);
}

/** A span's or a link's context as fields 1 to 3 of both: trace id, span id, and trace state when it has one. */
function writeIds(w: Writer, context: SpanContext): void {
  w.tag(1, BYTES);
  w.hex(context.traceId);
  w.tag(2, BYTES);
  w.hex(context.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) {
    w.tag(3, BYTES);
    w.string(traceState);
  }
}

/** OTLP's flags of a span or link: the context's trace flags, and whether its parent (or it) is remote. */
function flagsOf(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

function writeLink(w: Writer, link: Link): void {
  const at = w.open();
  const context = link.context;
  writeIds(w, context);
  if (link.attributes) writeAttributes(w, link.attributes, 4);
  w.tag(5, VARINT);
  w.varint32(link.droppedAttributesCount || 0);
  w.tag(6, FIXED32);
  w.fixed32(flagsOf(context.traceFlags, context.isRemote));
  w.close(at);
}

function writeSpan(w: Writer, span: ReadableSpan): void {
  const at = w.open();
  const context = span.spanContext();
  writeIds(w, context);
  const parent = span.parentSpanContext;
  if (parent?.spanId) {
    w.tag(4, BYTES);
    w.hex(parent.spanId);
  }
  w.tag(5, BYTES);
  w.string(span.name);
  // OTLP's kinds count from 1: its 0 is "unspecified", which the API has no name for.
  if (span.kind != null) {
    w.tag(6, VARINT);
    w.varint32(span.kind + 1);
  }
  w.tag(7, FIXED64);
  w.time(span.startTime);
  w.tag(8, FIXED64);
  w.time(span.endTime);
  if (span.attributes) writeAttributes(w, span.attributes, 9);
  w.tag(10, VARINT);
  w.varint64(span.droppedAttributesCount);
  for (const event of span.events) {
    w.tag(11, BYTES);
    writeEvent(w, event);
  }
  w.tag(12, VARINT);
  w.varint64(span.droppedEventsCount);
  for (const link of span.links) {
    w.tag(13, BYTES);
    writeLink(w, link);
  }
  w.tag(14, VARINT);
  w.varint64(span.droppedLinksCount);
  w.tag(15, BYTES);
  writeStatus(w, span.status);
  w.tag(16, FIXED32);
  w.fixed32(flagsOf(context.traceFlags, parent?.isRemote));
  w.close(at);
}

function writeScope(w: Writer, scope: InstrumentationScope & { attributes?: Attributes; droppedAttributesCount?: number }): void {
  w.tag(1, BYTES);
  const at = w.open();
  w.tag(1, BYTES);
  w.string(scope.name);
  if (scope.version) {
    w.tag(2, BYTES);
    w.string(scope.version);
  }
  if (scope.attributes) writeAttributes(w, scope.attributes, 3);
  if (scope.droppedAttributesCount) {
    w.tag(4, VARINT);
    w.varint32(scope.droppedAttributesCount);
  }
  w.close(at);
}

function writeResource(w: Writer, resource: Resource): void {
  w.tag(1, BYTES);
  const at = w.open();
  if (resource.attributes) writeAttributes(w, resource.attributes, 1);
  w.tag(2, VARINT);
  w.varint32(0);
  w.close(at);
}

/** The request's body: the spans grouped by resource, then by scope (each by identity, in the order first met). */
export function encodeSpans(spans: readonly ReadableSpan[]): Uint8Array {
  const byResource = new Map<Resource, Map<InstrumentationScope, ReadableSpan[]>>();
  for (const span of spans) {
    let byScope = byResource.get(span.resource);
    if (byScope === undefined) {
      byScope = new Map();
      byResource.set(span.resource, byScope);
    }
    const same = byScope.get(span.instrumentationScope);
    if (same === undefined) byScope.set(span.instrumentationScope, [span]);
    else same.push(span);
  }
  const w = new Writer(Math.max(1024, spans.length * BYTES_PER_SPAN));
  for (const [resource, byScope] of byResource) {
    w.tag(1, BYTES);
    const resourceSpans = w.open();
    writeResource(w, resource);
    for (const [scope, scoped] of byScope) {
      w.tag(2, BYTES);
      const scopeSpans = w.open();
      writeScope(w, scope);
      for (const span of scoped) {
        w.tag(2, BYTES);
        writeSpan(w, span);
      }
      if (scope.schemaUrl) {
        w.tag(3, BYTES);
        w.string(scope.schemaUrl);
      }
      w.close(scopeSpans);
    }
    if (resource.schemaUrl) {
      w.tag(3, BYTES);
      w.string(resource.schemaUrl);
    }
    w.close(resourceSpans);
  }
  return w.buf.subarray(0, w.pos);
}
