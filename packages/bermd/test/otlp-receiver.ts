// A stand-in OpenTelemetry collector: a loopback node:http server taking OTLP/HTTP trace exports at
// /v1/traces, in either encoding (http/json, and http/protobuf decoded with protobufjs from the messages
// of opentelemetry-proto that spans need), and holding the spans received in one shape for both; and
// metrics exports at /v1/metrics in http/json, holding their sums' data points.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/** A span as received, whichever the encoding: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  startNanos: bigint;
  endNanos: bigint;
  resource: Record<string, string | number | boolean>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

/** The part of opentelemetry-proto's trace and common messages a span's fields need, as protobufjs reads a descriptor. */
const PROTO = {
  nested: {
    AnyValue: {
      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'bytesValue'] } },
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
        bytesValue: { type: 'bytes', id: 7 },
      },
    },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
    Span: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        parentSpanId: { type: 'bytes', id: 4 },
        name: { type: 'string', id: 5 },
        kind: { type: 'int32', id: 6 },
        startTimeUnixNano: { type: 'fixed64', id: 7 },
        endTimeUnixNano: { type: 'fixed64', id: 8 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
        status: { type: 'Status', id: 15 },
      },
    },
    ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'Span', id: 2 } } },
    ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } } },
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
  },
};
const REQUEST = protobuf.Root.fromJSON(PROTO).lookupType('ExportTraceServiceRequest');

type Plain = Record<string, unknown>;

function valueOf(any: Plain | undefined): string | number | boolean {
  if (any === undefined) return '';
  if (any.stringValue !== undefined) return String(any.stringValue);
  if (any.boolValue !== undefined) return Boolean(any.boolValue);
  if (any.intValue !== undefined) return Number(any.intValue);
  if (any.doubleValue !== undefined) return Number(any.doubleValue);
  return '';
}

function attributesOf(list: unknown): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of (list as Plain[] | undefined) ?? []) out[String(kv.key)] = valueOf(kv.value as Plain | undefined);
  return out;
}

/** The spans of a decoded request: protobufjs' object form (ids base64, longs as strings) or OTLP/JSON's (ids hex). */
function spansOf(request: Plain, hexIds: boolean): ReceivedSpan[] {
  const id = (value: unknown) =>
    value === undefined || value === '' ? '' : hexIds ? String(value) : Buffer.from(String(value), 'base64').toString('hex');
  const out: ReceivedSpan[] = [];
  for (const rs of (request.resourceSpans as Plain[] | undefined) ?? []) {
    const resource = attributesOf((rs.resource as Plain | undefined)?.attributes);
    for (const ss of (rs.scopeSpans as Plain[] | undefined) ?? []) {
      for (const s of (ss.spans as Plain[] | undefined) ?? []) {
        const status = (s.status as Plain | undefined) ?? {};
        out.push({
          traceId: id(s.traceId),
          spanId: id(s.spanId),
          parentSpanId: id(s.parentSpanId),
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          attributes: attributesOf(s.attributes),
          status: { code: Number(status.code ?? 0), message: String(status.message ?? '') },
          startNanos: BigInt(String(s.startTimeUnixNano ?? 0)),
          endNanos: BigInt(String(s.endTimeUnixNano ?? 0)),
          resource,
        });
      }
    }
  }
  return out;
}

/** A data point of a sum (a counter's) as received in an OTLP/JSON metrics export. */
export interface ReceivedPoint {
  metric: string;
  attributes: Record<string, string | number | boolean>;
  value: number;
  /** OTLP's aggregation temporality: 1 delta, 2 cumulative. */
  temporality: number;
  resource: Record<string, string | number | boolean>;
}

/** The sums' data points of an OTLP/JSON metrics export. */
function pointsOf(request: Plain): ReceivedPoint[] {
  const out: ReceivedPoint[] = [];
  for (const rm of (request.resourceMetrics as Plain[] | undefined) ?? []) {
    const resource = attributesOf((rm.resource as Plain | undefined)?.attributes);
    for (const sm of (rm.scopeMetrics as Plain[] | undefined) ?? []) {
      for (const m of (sm.metrics as Plain[] | undefined) ?? []) {
        const sum = m.sum as Plain | undefined;
        for (const p of (sum?.dataPoints as Plain[] | undefined) ?? [])
          out.push({
            metric: String(m.name),
            attributes: attributesOf(p.attributes),
            value: Number(p.asDouble ?? p.asInt ?? 0),
            temporality: Number(sum?.aggregationTemporality ?? 0),
            resource,
          });
      }
    }
  }
  return out;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** The sums' data points of every metrics export received (OTLP/JSON, at /v1/metrics), in order. */
  readonly points: ReceivedPoint[][] = [];
  /** The content types of the exports received, in order. */
  readonly encodings: string[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => receiver.onRequest(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  /** The base URL a bermd is given (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves with the spans received once `match` finds what it wants among them; rejects after `ms`. */
  until<T>(match: (spans: ReceivedSpan[]) => T | undefined, ms = 20_000): Promise<T> {
    return this.wait(
      () => match(this.spans),
      ms,
      () => `the spans awaited did not arrive within ${ms} ms; received: ${this.spans.map((s) => s.name).join(', ')}`,
    );
  }

  /** Resolves once `match` finds what it wants among the metrics exports received (each its sums' points); rejects after `ms`. */
  untilPoints<T>(match: (exports: ReceivedPoint[][]) => T | undefined, ms = 20_000): Promise<T> {
    return this.wait(
      () => match(this.points),
      ms,
      () => `the metrics awaited did not arrive within ${ms} ms; ${this.points.length} exports received`,
    );
  }

  private wait<T>(found: () => T | undefined, ms: number, missing: () => string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = found();
        if (value === undefined) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(missing()));
      }, ms);
      this.waiters.add(check);
      check();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const type = req.headers['content-type'] ?? '';
      if (req.url === '/v1/metrics' && type.startsWith('application/json')) {
        this.points.push(pointsOf(JSON.parse(body.toString('utf8')) as Plain));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        for (const check of [...this.waiters]) check();
        return;
      }
      if (req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      this.encodings.push(type);
      if (type.startsWith('application/json')) {
        this.spans.push(...spansOf(JSON.parse(body.toString('utf8')) as Plain, true));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        const decoded = REQUEST.toObject(REQUEST.decode(body), { longs: String, bytes: String }) as Plain;
        this.spans.push(...spansOf(decoded, false));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      }
      for (const check of [...this.waiters]) check();
    });
  }
}
