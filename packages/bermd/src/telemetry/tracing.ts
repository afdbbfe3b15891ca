/**
 * bermd's tracer: a provider beside the meter's, made only when an endpoint is configured (trace-config.ts),
 * its exporter loaded then and not before. The rooms record through what this hands them (an MCP
 * request's span, a call's trace, a host call's, a route's, a deploy's phases), never the SDK; where
 * tracing is off they are handed nothing, and test that once.
 *
 * Names and attributes are the OpenTelemetry semantic conventions': MCP's for `/mcp` (the registry's `mcp.*`
 * and `gen_ai.*` are still in development, so their names are spelt here rather than imported from the
 * conventions' incubating entry point, as that package advises), HTTP's for the control API and for what a
 * guest sends. What bermd adds under a tool call is its own: `bermd.queue`, `bermd.run`, `bermd.instantiate`,
 * `berm.call`.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Tracer,
  isSpanContextValid,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  RandomIdGenerator,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import { ThreadSpanExporter } from './export-thread.js';
import { now, RunSpan, TimedSpan, type TimedSpanSink } from './timed-span.js';
import type { TraceConfig } from './trace-config.js';

const MCP_SESSION = 'mcp.session.id';
const MCP_VERSION = 'mcp.protocol.version';
const TOOL_NAME = 'gen_ai.tool.name';
const OPERATION = 'gen_ai.operation.name';
const TOOL_ARGUMENTS = 'gen_ai.tool.call.arguments';
const TOOL_RESULT = 'gen_ai.tool.call.result';
/** 2026-07-28 carries the protocol version in every request's `_meta`. */
const VERSION_META = 'io.modelcontextprotocol/protocolVersion';
/** The most of an answer read back for its error: a larger one is a result, not an error object. */
const MAX_READ_BACK = 4 * 1024 * 1024;

const propagator = new W3CTraceContextPropagator();

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function samplerOf(config: TraceConfig): Sampler {
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(config.ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * The exporter of `config.protocol`, its packages imported now: a bermd without traces never loads one.
 * A batch is serialized on this thread, by bermd's encoder for http/protobuf (span-protobuf.ts says why)
 * or the SDK's for http/json, and sent from a thread of its own by the SDK's OTLP/HTTP export delegate
 * (export-thread.ts says why).
 */
async function exporterOf(config: TraceConfig): Promise<SpanExporter> {
  const target = { url: config.url, protocol: config.protocol };
  if (config.protocol === 'http/json') {
    const { JsonTraceSerializer } = await import('@opentelemetry/otlp-transformer');
    return new ThreadSpanExporter((spans) => JsonTraceSerializer.serializeRequest(spans), target);
  }
  const { encodeSpans } = await import('./span-protobuf.js');
  return new ThreadSpanExporter(encodeSpans, target);
}

/** A URL as a span records it: no credentials, and each query value replaced, as the HTTP conventions advise. */
export function recordedUrl(url: URL): string {
  const shown = new URL(url.href);
  shown.username = '';
  shown.password = '';
  shown.hash = '';
  if (shown.search !== '') {
    const keys = [...shown.searchParams.keys()];
    shown.search = keys.map((k) => `${encodeURIComponent(k)}=REDACTED`).join('&');
  }
  return shown.href;
}

/** The trace context a request carries: in its `params._meta` (which wins) or in its HTTP headers. */
function parentOf(headers: IncomingHttpHeaders, meta: unknown): Context {
  if (isObject(meta) && typeof meta.traceparent === 'string') {
    const carrier: Record<string, string> = { traceparent: meta.traceparent };
    if (typeof meta.tracestate === 'string') carrier.tracestate = meta.tracestate;
    return propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  }
  if (headers.traceparent === undefined) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

/** The JSON-RPC messages of an answer: its JSON body, or the `data:` lines of its SSE frames. */
function messagesOf(text: string, type: string): unknown[] {
  const out: unknown[] = [];
  const read = (json: string) => {
    try {
      const value: unknown = JSON.parse(json);
      if (Array.isArray(value)) out.push(...value);
      else out.push(value);
    } catch {
      // Not a message: a keep-alive comment's neighbour, or a frame cut short.
    }
  };
  if (type.includes('text/event-stream')) {
    for (const line of text.split('\n')) if (line.startsWith('data:')) read(line.slice(5).trim());
  } else read(text);
  return out;
}

/**
 * Keeps what is written of `res`'s body, up to a bound, from now on. Answers how to read the messages kept,
 * once the answer is sent.
 *
 * Only for an answer no one tells: wrapping a response's `write` and `end` gives it methods of its own,
 * which the answers told as messages (every call on the fast path) are spared, and with them the wrappers'
 * calls and the buffers they keep.
 */
function writtenMessages(res: ServerResponse): () => readonly unknown[] {
  const chunks: Buffer[] = [];
  let size = 0;
  const keep = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function' || size > MAX_READ_BACK) return;
    const buffer = Buffer.isBuffer(chunk)
      ? chunk
      : typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array);
    size += buffer.length;
    chunks.push(buffer);
  };
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as ServerResponse['write'];
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as ServerResponse['end'];
  return () => {
    if (size > MAX_READ_BACK) return [];
    return messagesOf(Buffer.concat(chunks).toString('utf8'), String(res.getHeader('content-type') ?? ''));
  };
}

/** The server named by a request, as its span records it. */
interface ServerOf {
  address?: string;
  port?: number;
}

/** A `Host` header's name (an IPv6 address in its brackets) and port, when it has one. */
function serverOf(host: string): ServerOf {
  if (host === '') return {};
  const after = host.startsWith('[') ? host.indexOf(']') + 1 : 0;
  const colon = host.indexOf(':', after);
  if (colon === -1) return { address: host };
  const port = Number(host.slice(colon + 1));
  const address = host.slice(0, colon);
  return Number.isInteger(port) && port >= 0 && port <= 65535 && colon + 1 < host.length ? { address, port } : { address };
}

/** One control-API request's SERVER span, as the control plugin holds it. */
export interface ControlRequestTrace {
  /** Runs `fn` as the phase `name` of the deploy the request makes: a child span of the request's. */
  phase<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /** The request span's ids, for the log lines written for the request. */
  readonly logFields: { trace_id: string; span_id: string };
  end(status: number): void;
}

/** One MCP request's SERVER span, as the `/mcp` plugin holds it. */
export interface McpRequestTrace {
  /** What a tool call the request makes tells its trace through: its spans are the request span's children. */
  callTrace(harness: string, tool: string): CallSpans | UnsampledCall;
  /** The 2025 session the request belongs to, once known. */
  session(id: string | undefined): void;
  /**
   * The JSON-RPC message answering the request, told by whoever builds it (the fast path, a refusal) before
   * writing it: the span reads its outcome from it.
   */
  answered(message: unknown): void;
  /**
   * The answer is written by what does not tell it (the SDK's transports, the error handler): the span
   * reads it back as it is written, and ends once it is sent. Told before anything is written.
   */
  readBack(): void;
  /** The answerer is done (its answer written, or its client gone): the span ends now, unless it reads the answer back. */
  settled(): void;
}

export class Tracing {
  readonly config: TraceConfig;
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly sink: TimedSpanSink;
  private readonly sampler: Sampler;
  private readonly redact: (text: string) => string;
  /** The last `Host` header read, and what it names: a client's requests all carry the same. */
  private lastHost?: { header: string; server: ServerOf };

  private constructor(
    config: TraceConfig,
    provider: BasicTracerProvider,
    sampler: Sampler,
    sink: TimedSpanSink,
    redact: (text: string) => string,
  ) {
    this.config = config;
    this.provider = provider;
    this.sampler = sampler;
    this.tracer = provider.getTracer(sink.scope.name, sink.scope.version);
    this.sink = sink;
    this.redact = redact;
  }

  /**
   * The tracer `config` asks for, its exporter loaded. `redact` hides secret values in text a span
   * records.
   */
  static async start(config: TraceConfig, version: string, redact: (text: string) => string): Promise<Tracing> {
    const exporter = await exporterOf(config);
    const resource = resourceFromAttributes({
      ...config.resource,
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: version,
    });
    const processor = new BatchSpanProcessor(
      exporter,
      config.scheduleDelayMs === undefined ? {} : { scheduledDelayMillis: config.scheduleDelayMs },
    );
    const sampler = samplerOf(config);
    const provider = new BasicTracerProvider({ resource, sampler, spanProcessors: [processor] });
    const sink: TimedSpanSink = { processor, resource, scope: { name: 'bermd', version }, ids: new RandomIdGenerator() };
    return new Tracing(config, provider, sampler, sink, redact);
  }

  /**
   * The SERVER span of one JSON-RPC request on `/mcp` (`body` a request: a method and an id; anything else,
   * a notification or a batch, undefined). It ends when its answerer is done (or, read back, once `res` is
   * sent), its `error.type` read from the answer.
   */
  mcpRequest(headers: IncomingHttpHeaders, body: unknown, res: ServerResponse): McpRequestTrace | undefined {
    if (!isObject(body) || typeof body.method !== 'string' || (typeof body.id !== 'string' && typeof body.id !== 'number'))
      return undefined;
    const { method, id } = body;
    const params = isObject(body.params) ? body.params : {};
    const meta = params._meta;
    const tool = method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined;
    // The keys spelt out, not computed: V8 then builds the object from one template, and one is made per request.
    const attributes: Attributes = { 'mcp.method.name': method, 'jsonrpc.request.id': String(id), 'network.transport': 'tcp' };
    const host = this.serverOf(headers.host);
    if (host.address !== undefined) attributes[ATTR_SERVER_ADDRESS] = host.address;
    if (host.port !== undefined) attributes[ATTR_SERVER_PORT] = host.port;
    const version =
      (isObject(meta) && typeof meta[VERSION_META] === 'string' ? meta[VERSION_META] : undefined) ??
      (typeof headers['mcp-protocol-version'] === 'string' ? headers['mcp-protocol-version'] : undefined) ??
      (method === 'initialize' && typeof params.protocolVersion === 'string' ? params.protocolVersion : undefined);
    if (version !== undefined) attributes[MCP_VERSION] = version;
    if (tool !== undefined) {
      attributes[TOOL_NAME] = tool;
      attributes[OPERATION] = 'execute_tool';
      if (this.config.recordContent && params.arguments !== undefined)
        attributes[TOOL_ARGUMENTS] = this.redact(JSON.stringify(params.arguments));
    }
    const parent = parentOf(headers, meta);
    const name = tool === undefined ? method : `${method} ${tool}`;
    // What the SDK's tracer would do for this span, done here: its span would be made only to be read back
    // (timed-span.ts says why).
    const remote = trace.getSpanContext(parent);
    const valid = remote !== undefined && isSpanContextValid(remote) ? remote : undefined;
    const traceId = valid?.traceId ?? this.sink.ids.generateTraceId();
    const sampling = this.sampler.shouldSample(parent, traceId, name, SpanKind.SERVER, attributes, []);
    const traceState = sampling.traceState ?? valid?.traceState;
    if (sampling.decision !== SamplingDecision.RECORD_AND_SAMPLED) {
      // Not recorded: what the request's calls send still carries its trace, unsampled.
      const ctx = trace.setSpanContext(parent, {
        traceId,
        spanId: this.sink.ids.generateSpanId(),
        traceFlags: TraceFlags.NONE,
        traceState,
      });
      return {
        callTrace: () => new UnsampledCall(this.tracer, ctx, this.redact),
        session: () => {},
        answered: () => {},
        readBack: () => {},
        settled: () => {},
      };
    }
    const span = new TimedSpan(this.sink, name, valid, attributes, now(), SpanKind.SERVER, { traceId, traceState });
    let told: unknown;
    let written: (() => readonly unknown[]) | undefined;
    let ended = false;
    const finish = () => {
      if (ended) return;
      ended = true;
      const messages = told !== undefined ? [told] : written === undefined ? [] : written();
      this.endMcp(span, id, res.statusCode, messages, tool !== undefined);
    };
    return {
      // The request's span is handed on as it is: a context holding it is made only for what a guest sends.
      callTrace: (harness, tool) => new CallSpans(this.tracer, this.sink, parent, span.spanContext(), harness, tool, this.redact),
      session: (sessionId) => {
        if (sessionId !== undefined) span.attributes[MCP_SESSION] = sessionId;
      },
      answered: (message) => {
        told = message;
      },
      readBack: () => {
        if (written !== undefined) return;
        written = writtenMessages(res);
        // Read back, it ends once the answer is sent, or the connection closes first.
        res.once('finish', finish);
        res.once('close', finish);
      },
      settled: () => {
        if (written === undefined) finish();
      },
    };
  }

  /**
   * What a tool call made outside any MCP request tells its trace through: the trace starts here, with a
   * span of its own. (A request's calls are traced under the request's span, through `mcpRequest`'s
   * answer.) Under a span its sampler dropped, the call is dropped too, and makes no span at all: every
   * sampler bermd offers decides a child as it decided its parent (by the parent's flag, or by the trace id
   * they share), so each of its spans would be made only to be dropped, with the worker's times told for them.
   *
   * Contexts are handed on explicitly, here and everywhere in bermd, rather than kept current across
   * `await`s by a context manager: on Node 20 and 22 that manager's async hooks run for every promise of
   * every request, traced or not, once the first span is made current.
   */
  callTrace(harness: string, tool: string): CallSpans | UnsampledCall {
    const root = this.tracer.startSpan(`bermd.call ${harness}.${tool}`, { attributes: { 'berm.harness': harness, 'berm.tool': tool } });
    if (!root.isRecording()) return new UnsampledCall(this.tracer, trace.setSpan(ROOT_CONTEXT, root), this.redact);
    return new CallSpans(this.tracer, this.sink, ROOT_CONTEXT, root.spanContext(), harness, tool, this.redact, root);
  }

  /**
   * The SERVER span of one control-API request: `route` its template (`/harnesses/:name`), started from
   * the request's `traceparent`. Answers what its handler hands on: how to run a deploy's phases as its
   * children, the ids its log lines carry, and how to end it.
   */
  httpRequest(method: string, route: string, headers: IncomingHttpHeaders): ControlRequestTrace {
    const parent = headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.tracer.startSpan(
      `${method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_HTTP_ROUTE]: route } },
      parent,
    );
    const ctx = trace.setSpan(parent, span);
    return {
      phase: (name, fn) => this.phase(name, fn, ctx),
      logFields: traceLogFields(ctx),
      end(status) {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        if (status >= 500) {
          span.setAttribute(ATTR_ERROR_TYPE, String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      },
    };
  }

  /** Runs `fn` as the phase `name` of a deploy, a child span of `parent`'s. */
  private async phase<T>(name: string, fn: () => Promise<T> | T, parent: Context): Promise<T> {
    const span = this.tracer.startSpan(`bermd.deploy.${name}`, {}, parent);
    try {
      return await fn();
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.redact(e instanceof Error ? e.message : String(e)) });
      const code = (e as { code?: unknown }).code;
      span.setAttribute(ATTR_ERROR_TYPE, typeof code === 'string' ? code : 'error');
      throw e;
    } finally {
      span.end();
    }
  }

  /** The server a request's `Host` header names (`server.address`, `server.port`). */
  private serverOf(header: string | undefined): ServerOf {
    if (header === undefined) return {};
    if (this.lastHost?.header !== header) this.lastHost = { header, server: serverOf(header) };
    return this.lastHost.server;
  }

  /** Sends the spans still held and stops. */
  async close(): Promise<void> {
    await this.provider.shutdown().catch(() => {});
  }

  /** Ends the request's span, its outcome read from the `messages` of its answer (the one with the request's `id`). */
  private endMcp(span: TimedSpan, id: string | number, status: number, messages: readonly unknown[], isCall: boolean): void {
    let errorType: string | undefined;
    let message: string | undefined;
    for (const m of messages) {
      if (!isObject(m) || m.id !== id) continue;
      if (isObject(m.error)) {
        errorType = String(m.error.code);
        if (typeof m.error.message === 'string') message = m.error.message;
      } else if (isObject(m.result)) {
        if (isCall && m.result.isError === true) {
          errorType = 'tool_error';
          const first = Array.isArray(m.result.content) ? m.result.content[0] : undefined;
          if (isObject(first) && typeof first.text === 'string') message = first.text;
        }
        if (isCall && this.config.recordContent) span.attributes[TOOL_RESULT] = this.redact(JSON.stringify(m.result));
      }
    }
    if (errorType === undefined && status >= 400) errorType = String(status);
    span.end(
      now(),
      errorType === undefined ? undefined : { type: errorType, message: message === undefined ? undefined : this.redact(message) },
    );
  }
}

/**
 * One tool call's spans under its request's: the wait for a worker (`bermd.queue`), the run on it
 * (`bermd.run`), each instance made (`bermd.instantiate`), each nested `berm.call`, and each HTTP request
 * a guest sends (a CLIENT span, whose context goes to the upstream). The worker's times come back in its
 * messages, so these are made on the main thread, in order, with the worker's clock.
 */
export class CallSpans {
  readonly sampled = true;
  private readonly made = now();
  private run?: RunSpan;
  /** The nested calls open now, innermost last; the run below them. */
  private readonly open: TimedSpan[] = [];

  constructor(
    private readonly tracer: Tracer,
    private readonly sink: TimedSpanSink,
    /** The context the call's parent span was started in (its trace's caller's, or none): what a guest sends is traced in it. */
    private readonly base: Context,
    /** The span the call's spans hang under: its request's, or the one its trace started with. */
    private readonly parentSpan: SpanContext,
    private readonly harness: string,
    private readonly tool: string,
    private readonly redact: (text: string) => string,
    /** The span this call's trace started with, when it was not under a request's: it ends with the call. */
    private readonly root?: Span,
  ) {}

  started(at: number): void {
    // The wait is the run's to tell (RunSpan).
    this.run = new RunSpan(
      this.sink,
      `bermd.run ${this.harness}.${this.tool}`,
      this.parentSpan,
      { 'berm.harness': this.harness, 'berm.tool': this.tool },
      this.made,
      at,
      this.harness,
    );
  }

  instantiated(harness: string, tool: string, depth: number, from: number, to: number): void {
    if (this.open.length === 0 && this.run?.instantiated(harness, tool, from, to)) return;
    new TimedSpan(
      this.sink,
      'bermd.instantiate',
      this.current(),
      { 'berm.harness': harness, 'berm.tool': tool, 'berm.call.depth': depth },
      from,
    ).end(to);
  }

  entered(harness: string, tool: string, depth: number, at: number): void {
    this.open.push(
      new TimedSpan(
        this.sink,
        `berm.call ${harness}.${tool}`,
        this.current(),
        { 'berm.harness': harness, 'berm.tool': tool, 'berm.call.depth': depth },
        at,
      ),
    );
  }

  left(_depth: number, at: number, error?: string): void {
    this.open.pop()?.end(at, error === undefined ? undefined : { type: error });
  }

  host(name: string): HostSpan {
    return new HostSpan(this.tracer, trace.setSpanContext(this.base, this.current()), name, this.redact);
  }

  ended(error?: { code: string; message: string }): void {
    const failure = error === undefined ? undefined : { type: error.code, message: this.redact(error.message) };
    if (this.run === undefined) {
      // It never got a worker: its wait is all there is.
      new TimedSpan(this.sink, 'bermd.queue', this.parentSpan, { 'berm.harness': this.harness }, this.made).end(now(), failure);
    } else {
      // A worker stopped under a nested call (its time limit) never said it left.
      for (let top = this.open.pop(); top !== undefined; top = this.open.pop()) top.end();
      this.run.end(now(), failure);
    }
    this.root?.end();
  }

  private current(): SpanContext {
    return this.open.length === 0 ? (this.run?.spanContext() ?? this.parentSpan) : this.open[this.open.length - 1]!.spanContext();
  }
}

/**
 * A tool call whose trace was not sampled: nothing of it is recorded, and what a guest sends still
 * carries the trace's context (unsampled), as the request's own span would hand it on.
 */
export class UnsampledCall {
  readonly sampled = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly parent: Context,
    private readonly redact: (text: string) => string,
  ) {}

  started(): void {}
  instantiated(): void {}
  entered(): void {}
  left(): void {}
  ended(): void {}

  host(name: string): HostSpan {
    return new HostSpan(this.tracer, this.parent, name, this.redact);
  }
}

/** A guest's HTTP request as a CLIENT span in the HTTP conventions, whose context the request carries. */
export class HostSpan {
  private span?: Span;

  constructor(
    private readonly tracer: Tracer,
    private readonly parent: Context,
    private readonly name: string,
    private readonly redact: (text: string) => string,
  ) {}

  sending(method: string, url: URL): Record<string, string> {
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    this.span = this.tracer.startSpan(
      method,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_SERVER_ADDRESS]: url.hostname,
          [ATTR_SERVER_PORT]: port,
          [ATTR_URL_FULL]: this.redact(recordedUrl(url)),
          'berm.syscall': this.name,
        },
      },
      this.parent,
    );
    const headers: Record<string, string> = {};
    propagator.inject(trace.setSpan(this.parent, this.span), headers, defaultTextMapSetter);
    return headers;
  }

  answered(status: number): void {
    if (this.span === undefined) return;
    this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (status >= 400) {
      this.span.setAttribute(ATTR_ERROR_TYPE, String(status));
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }

  failed(message: string): void {
    if (this.span === undefined) return;
    this.span.setAttribute(ATTR_ERROR_TYPE, 'request_failed');
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: this.redact(message) });
    this.span.end();
  }
}

/** The ids of `ctx`'s span, as a log line written for it carries them. */
function traceLogFields(ctx: Context): { trace_id: string; span_id: string } {
  const { traceId, spanId } = trace.getSpanContext(ctx)!;
  return { trace_id: traceId, span_id: spanId };
}
