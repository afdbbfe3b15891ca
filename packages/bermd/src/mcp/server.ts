/**
 * The MCP server over the deployed set, built without a transport, so it runs as well over the SDK's
 * in-memory pair as over Streamable HTTP. One builder per protocol generation, over the same handlers:
 *
 * - `buildMcpServer(core, session)`: one 2025-era session (2025-11-25 and older), which keeps what its
 *   client set with `logging/setLevel` and hears of events from other sessions;
 * - `buildStatelessMcpServer(core)`: one 2026-07-28 request. It keeps nothing: everything it needs
 *   travels in the request (the client's log level in `_meta`), so any bermd process sharing the
 *   deployed set answers it the same.
 *
 * Each request is answered for its principal (access.ts): the lists, the usage and the calls are those
 * of the harnesses it may call. A server reads who asks from the request (the SDK's `authInfo`), not from
 * when it was built, so a session whose client stepped up to a token with more scopes sees more at once.
 *
 * The low-level `Server` is used because the tool set changes under it and its schemas are JSON Schema
 * from images, not zod (the SDK marks it for "advanced use cases", which this is).
 */
import {
  type CallToolResult,
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
  type LoggingMessageNotification,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  type ServerContext,
  type ServerOptions,
} from '@modelcontextprotocol/server';
import { ApiError } from '@berm/protocol';
import type { Logger } from 'pino';
import type { Use } from '../deploy/index.js';
import type { BermdMetrics, LiveFigures, McpRequestTrace, Tracing } from '../telemetry/index.js';
import { type Caller, type CallAsk, type CallOptions, type CallOutcome, type SignalLike, Stop } from '../runtime/index.js';
import { InputRounds, sessionAsk } from './asks.js';
import { callAccess, callerOf, REFUSED_CODE, refusalMessage, traceOf } from './access.js';
import { type CatalogTool, type Generation, harnessOfUsageUri, type ToolCatalog, USAGE_MIME_TYPE, usageUri } from './catalog.js';
import { guestLogMessage } from './guest-log.js';
import { toolResult } from './tool-result.js';
import type { Receipts } from './receipts.js';
import {
  complete,
  getPrompt,
  listPrompts,
  listResources,
  listTemplates,
  readResource,
  resolveUri,
  type SurfaceCore,
} from './surface-handlers.js';

/** The level an accepted `berm.emit` is sent at: an event is normal but significant, which is RFC 5424's notice. */
export const EVENT_LOG_LEVEL: LoggingLevel = 'notice';

/** MCP's log levels, least severe first (RFC 5424's, as the specification orders them). */
const LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const SEVERITY = new Map(LEVELS.map((level, index) => [level, index]));
/** The JSON-RPC code of a bermd wire error answered on /mcp (plugin.ts answers the same before the SDK). */
const STORE_REFUSED_RPC_CODE = -32000;

export function isLoggingLevel(value: unknown): value is LoggingLevel {
  return typeof value === 'string' && SEVERITY.has(value as LoggingLevel);
}

/**
 * How long a 2026-07-28 client may reuse what it was answered (MCP's caching hints, which that
 * generation requires on these results). A client that listens for list changes drops its copy when
 * told; one that does not sees a deploy within the lists' few seconds. `private`: the answers sit
 * behind bermd's token, so no cache shared between callers may keep them.
 */
export const CACHE_HINTS: NonNullable<ServerOptions['cacheHints']> = {
  'tools/list': { ttlMs: 5_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 5_000, cacheScope: 'private' },
  'resources/read': { ttlMs: 5_000, cacheScope: 'private' },
  'server/discover': { ttlMs: 60_000, cacheScope: 'private' },
};

export type EventMessage = LoggingMessageNotification['params'];

/** What every server shares: the deployed set, how to run a tool, and where usage and events go. */
export interface McpCore extends Partial<Omit<SurfaceCore, 'catalog'>> {
  catalog: ToolCatalog;
  call(harness: string, tool: string, args: unknown, options: CallOptions): Promise<CallOutcome>;
  recordUse(harness: string, use: Use): void;
  logger: Logger;
  /** bermd's version, for `serverInfo`. */
  version: string;
  /** Sends an accepted event to every 2025-era session that asked for logs, but `from`, which receives it with the result of its call. */
  broadcastEvent(message: EventMessage, from: SessionState): void;
  /** The interval of every `/mcp` stream's keep-alive comment, the SDK's and the fast path's (app/keep-alive.ts); its default when unset. */
  keepAliveMs?: number;
  /** Where requests, calls refused before the runtime and sessions are recorded; nothing is when unset (metrics off). */
  metrics?: BermdMetrics;
  /** Where requests and calls are traced; unset when tracing is off, and then nothing is. */
  tracing?: Tracing;
  /** The page's live figures, told of calls refused before the runtime as the runtime tells them of the rest; kept with metrics off. */
  figures?: LiveFigures;
  /** Where the calls of external_write tools keep their receipts; unset (no store keeps them), they run as any call. */
  receipts?: Receipts;
  /** A deployed harness's time and result limits, which bound a write's wait and its receipt's answer. */
  limitsOf?(harness: string): { callTimeoutMs: number; maxResultBytes: number } | undefined;
}

/** What a server keeps about its client: for a session, what `logging/setLevel` set; for one 2026 request, what its `_meta` asked. */
export interface SessionState {
  /** Until set, the client receives no log messages. */
  level?: LoggingLevel;
  /**
   * Who the client is, for what is sent it unasked (list changes, other calls' events): a session's latest
   * principal. Unset, the client is the daemon's own and hears of everything (a server over the SDK's
   * in-memory pair).
   */
  caller?: Caller;
  /** Writes the level where the other replicas read it (a session on a shared store); unset, it lives here alone. */
  saveLevel?: () => Promise<void>;
  /** The resource URIs a 2025 session subscribed to (`resources/subscribe`), as it gave them. */
  subscriptions?: Set<string>;
  /** Writes the subscriptions where the other replicas read them; unset, they live here alone. */
  saveSubscriptions?: () => Promise<void>;
}

/** Whether a client at `state.level` receives a message at `level`. */
export function wantsLog(state: SessionState, level: LoggingLevel): boolean {
  return state.level !== undefined && SEVERITY.get(level)! >= SEVERITY.get(state.level)!;
}

/** The log level a 2026-07-28 request's `_meta` asks for, when it is one. */
export function requestedLevel(meta: unknown): LoggingLevel | undefined {
  const level = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[LOG_LEVEL_META_KEY] : undefined;
  return isLoggingLevel(level) ? level : undefined;
}

export function instructionsFor(separator: string): string {
  return `Each tool is named {harness}${separator}{tool}; before choosing among one harness's tools, read its usage at berm://{harness}/usage when it is listed.`;
}

export function serverInfo(core: McpCore): { name: string; version: string } {
  return { name: 'bermd', version: core.version };
}

/** MCP's `notifications/progress` params, without the token the request gave. */
export type ProgressMessage = { progress: number; total?: number; message?: string };

/** Who a call is for, and how its own notifications reach them. */
export interface CallChannel {
  /** The request's principal: the call runs with it (nested calls, secrets); none is the daemon's own. */
  caller: Caller | undefined;
  signal: SignalLike;
  notify(message: EventMessage): Promise<void>;
  /** The request's `_meta`: an external write's idempotency key is read from it. */
  meta?: unknown;
  /** Sends the call's progress; set only when the request gave a `progressToken` (then nothing else is sent). */
  progress?: (message: ProgressMessage) => Promise<void>;
  /** Asks the request's client what the guest's `berm.elicit` and `berm.sample` ask; unset, they are refused. */
  ask?: CallAsk;
  /** The request's span, when it is traced: the call's spans are its children. */
  trace?: McpRequestTrace;
}

/**
 * `tools/call`, shared by both generations' servers and the HTTP fast path (`fast-call.ts`): looks the
 * whole name up, runs the tool for its caller, records what it reached, and answers the tool result. An
 * unknown name is a protocol error (invalid params). A tool the caller may not call was refused 403
 * before the request got here (plugin.ts); should one still arrive, it is refused here with the same
 * code and scope, in the answer, and nothing runs.
 */
export async function callTool(
  core: McpCore,
  state: SessionState,
  generation: Generation,
  name: string,
  args: unknown,
  channel: CallChannel,
): Promise<CallToolResult> {
  const { caller } = channel;
  const started = core.metrics === undefined ? 0 : performance.now();
  const access = callAccess(core.catalog, caller, name);
  if ('unknown' in access) {
    // A name that is not listed labels nothing: a caller's guesses would each make a series.
    core.metrics?.callEnded(undefined, undefined, 'unknown-tool');
    core.metrics?.operationEnded('tools/call', seconds(started), undefined, String(ProtocolErrorCode.InvalidParams));
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
  if ('missing' in access) {
    recordRefusal(core, name, started);
    throw new ProtocolError(REFUSED_CODE, refusalMessage(caller!.name, name, access.missing), {
      code: 'insufficient-scope',
      scope: access.missing,
    });
  }
  const { tool } = access;
  const limits = tool.write === undefined ? undefined : core.limitsOf?.(tool.harness);
  if (tool.write === undefined || core.receipts === undefined || limits === undefined) {
    const { outcome, result } = await runTool(core, state, generation, tool, args, channel);
    core.metrics?.operationEnded('tools/call', seconds(started), tool, 'error' in outcome ? 'tool_error' : undefined);
    return result;
  }
  const { write } = tool;
  const reconcile = write.reconcile === undefined ? undefined : core.catalog.lookup(core.catalog.fullName(tool.harness, write.reconcile));
  const result = await core.receipts.call({
    principal: caller?.name ?? '',
    harness: tool.harness,
    tool: tool.tool,
    name,
    retry: write.retry,
    args: args ?? {},
    meta: channel.meta,
    limits,
    run: async (key) => {
      const { outcome, result } = await runTool(core, state, generation, tool, args, channel, key);
      return { result, code: 'error' in outcome ? outcome.error.code : undefined };
    },
    reconcile:
      reconcile === undefined ? undefined : async (key) => (await runTool(core, state, generation, reconcile, args, channel, key)).outcome,
    render: (outcome) => toolResult(tool, outcome, generation),
  });
  core.metrics?.operationEnded('tools/call', seconds(started), tool, result.isError === true ? 'tool_error' : undefined);
  return result;
}

/** Runs `tool` for the channel's caller (with `key`, an external write's idempotency key), records what it reached, and renders its answer. */
async function runTool(
  core: McpCore,
  state: SessionState,
  generation: Generation,
  tool: CatalogTool,
  args: unknown,
  channel: CallChannel,
  key?: string,
): Promise<{ outcome: CallOutcome; result: CallToolResult }> {
  const { caller } = channel;
  const principal = caller?.name;
  const outcome = await core.call(tool.harness, tool.tool, args ?? {}, {
    caller,
    signal: channel.signal,
    idempotencyKey: key,
    trace: channel.trace?.callTrace(tool.harness, tool.tool) ?? core.tracing?.callTrace(tool.harness, tool.tool),
    ask: channel.ask,
    onReport: (report) => {
      switch (report.kind) {
        case 'progress': {
          const { progress, total, message } = report;
          channel.progress?.({ progress, total, message }).catch((e: unknown) => {
            core.logger.debug({ err: e, harness: report.harness }, 'could not send progress to its caller');
          });
          break;
        }
        case 'event': {
          const { harness, tool: emitter, event, fields } = report;
          core.logger.info({ harness, tool: emitter, event, fields, principal }, 'event');
          const message: EventMessage = { level: EVENT_LOG_LEVEL, logger: harness, data: { event, fields, tool: emitter } };
          if (wantsLog(state, EVENT_LOG_LEVEL)) {
            channel.notify(message).catch((e: unknown) => {
              core.logger.debug({ err: e, harness, event }, 'could not send an event to its caller');
            });
          }
          core.broadcastEvent(message, state);
          break;
        }
        case 'log': {
          // bermd's own log has the line already (the runner's onReport, daemon.ts). The caller hears it
          // at its level, as it hears the call's events; other sessions never do, unlike events.
          const message = guestLogMessage(report);
          if (wantsLog(state, message.level)) {
            channel.notify(message).catch((e: unknown) => {
              core.logger.debug({ err: e, harness: report.harness }, 'could not send a log line to its caller');
            });
          }
          break;
        }
      }
    },
  });
  if ('error' in outcome && outcome.error.code === 'cancelled')
    core.logger.info({ harness: tool.harness, tool: tool.tool, principal }, 'call cancelled by its caller');
  for (const reached of outcome.reached.tools) core.recordUse(reached.harness, { tool: reached.tool });
  for (const emitted of outcome.reached.events) core.recordUse(emitted.harness, { event: emitted.event });
  return { outcome, result: toolResult(tool, outcome, generation) };
}

/** A `tools/call` of `name` refused for a scope its caller lacks (`started`: when the request came), nothing having run. */
export function recordRefusal(core: McpCore, name: string, started: number): void {
  if (core.metrics === undefined && core.figures === undefined) return;
  const tool = core.catalog.lookup(name);
  core.figures?.callEnded(tool?.harness, tool?.tool, 'insufficient-scope');
  if (core.metrics === undefined) return;
  core.metrics.callEnded(tool?.harness, tool?.tool, 'insufficient-scope');
  core.metrics.operationEnded('tools/call', seconds(started), tool, String(REFUSED_CODE));
}

/** Seconds since `started` (a `performance.now()`). */
function seconds(started: number): number {
  return (performance.now() - started) / 1000;
}

/** A signal that stops when either does. */
function either(a: SignalLike, b: Stop): Stop {
  const both = new Stop();
  const stop = (): void => both.abort();
  if (a.aborted || b.aborted) both.abort();
  a.addEventListener('abort', stop, { once: true });
  b.addEventListener('abort', stop);
  return both;
}

/** Where a server's client keeps its log level: a session's state, or each 2026 request's `_meta`. */
type LevelSource = { generation: 'legacy'; session: SessionState } | { generation: 'modern' };

function stateOf(source: LevelSource, ctx: ServerContext): SessionState {
  return source.generation === 'legacy' ? source.session : { level: requestedLevel(ctx.mcpReq.envelope) };
}

/** Who makes the request: its principal as the SDK carries it, or (no transport carrying one) the session's. */
function callerFor(source: LevelSource, ctx: ServerContext): Caller | undefined {
  return callerOf(ctx.http?.authInfo) ?? (source.generation === 'legacy' ? source.session.caller : undefined);
}

function build(core: McpCore, source: LevelSource): Server {
  const { generation } = source;
  const server = new Server(serverInfo(core), {
    capabilities: {
      tools: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
      prompts: { listChanged: true },
      completions: {},
      logging: {},
    },
    instructions: instructionsFor(core.catalog.separator),
    // Stamped on 2026-07-28 results only.
    cacheHints: CACHE_HINTS,
  });

  server.setRequestHandler('tools/list', (_request, ctx) => ({ tools: core.catalog.tools(generation, callerFor(source, ctx)) }));

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const caller = callerFor(source, ctx);
    const token = request.params._meta?.progressToken;
    // 2026-07-28: questions to the client end the round (asks.ts); 2025: they are requests on the call's stream.
    const rounds =
      generation === 'modern'
        ? new InputRounds(InputRounds.capabilitiesOf(ctx.mcpReq.envelope), ctx.mcpReq.requestState(), ctx.mcpReq.inputResponses)
        : undefined;
    const ask: CallAsk =
      rounds?.ask ??
      sessionAsk(
        () => server.getClientCapabilities(),
        (req, options) => ctx.mcpReq.send(req as { method: 'elicitation/create'; params: Record<string, unknown> }, options),
      );
    try {
      const result = await callTool(core, stateOf(source, ctx), generation, request.params.name, request.params.arguments, {
        caller,
        signal: rounds === undefined ? ctx.mcpReq.signal : either(ctx.mcpReq.signal, rounds.stop),
        meta: request.params._meta,
        trace: traceOf(ctx.http?.authInfo),
        // Sent with the call, on its response stream, so the caller sees it before the result.
        notify: (message) => ctx.mcpReq.notify({ method: 'notifications/message', params: message }),
        progress:
          token === undefined
            ? undefined
            : (message) => ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, ...message } }),
        ask,
      });
      return rounds?.result() ?? result;
    } finally {
      // The fast path (fast-call.ts) logs the same line with its own `via`.
      core.logger.debug(
        { session: ctx.sessionId, rpc_id: ctx.mcpReq.id, tool: request.params.name, principal: caller?.name, via: 'transport' },
        'tools/call finished',
      );
    }
  });

  const surface = surfaceCore(core);

  server.setRequestHandler('resources/list', (_request, ctx) => {
    const caller = callerFor(source, ctx);
    return { resources: [...core.catalog.resources(caller), ...listResources(surface, caller)] };
  });

  server.setRequestHandler('resources/read', (request, ctx) => {
    const { uri } = request.params;
    const harness = harnessOfUsageUri(uri);
    const caller = callerFor(source, ctx);
    // A harness's own resources: `usage` is never one of them (the reader refuses it).
    if (harness === undefined) return readResource(surface, uri, caller, ctx.mcpReq.signal);
    const shown = caller === undefined || caller.mayCall(harness);
    const usage = shown ? core.catalog.usage(harness) : undefined;
    // MCP 2026-07-28 answers an unknown resource with -32602 and the URI as data; the SDK sends that
    // code to every generation. The usage of a harness the caller may not call is as unknown as that of
    // one not deployed.
    if (usage === undefined) throw new ResourceNotFoundError(uri);
    return { contents: [{ uri: usageUri(harness), mimeType: USAGE_MIME_TYPE, text: usage }] };
  });

  server.setRequestHandler('resources/templates/list', (_request, ctx) => ({
    resourceTemplates: listTemplates(surface, callerFor(source, ctx)),
  }));

  server.setRequestHandler('prompts/list', (_request, ctx) => ({ prompts: listPrompts(surface, callerFor(source, ctx)) }));

  server.setRequestHandler('prompts/get', (request, ctx) =>
    getPrompt(surface, request.params.name, request.params.arguments, callerFor(source, ctx), ctx.mcpReq.signal),
  );

  server.setRequestHandler('completion/complete', (request, ctx) =>
    complete(surface, request.params as Parameters<typeof complete>[1], callerFor(source, ctx), ctx.mcpReq.signal),
  );

  if (source.generation === 'legacy') {
    const { session } = source;
    // 2026-07-28 has no subscribe: its clients name the URIs in `subscriptions/listen`.
    // Kept in the store where replicas share one, so the replica that serves the session's stream next,
    // whichever it is, knows what to tell it.
    const saveSubscriptions = async (previous: Set<string> | undefined): Promise<void> => {
      try {
        await session.saveSubscriptions?.();
      } catch (e) {
        session.subscriptions = previous;
        if (e instanceof ApiError) throw new ProtocolError(STORE_REFUSED_RPC_CODE, e.message, { code: e.code });
        throw e;
      }
    };
    server.setRequestHandler('resources/subscribe', async (request, ctx) => {
      resolveUri(surface, request.params.uri, callerFor(source, ctx));
      const previous = session.subscriptions;
      session.subscriptions = new Set(previous).add(request.params.uri);
      await saveSubscriptions(previous);
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', async (request) => {
      const previous = session.subscriptions;
      const next = new Set(previous);
      next.delete(request.params.uri);
      session.subscriptions = next.size === 0 ? undefined : next;
      await saveSubscriptions(previous);
      return {};
    });
    // Replaces the SDK's own handler, which sends log messages to sessions that never asked for them.
    server.setRequestHandler('logging/setLevel', async (request) => {
      const previous = session.level;
      session.level = request.params.level;
      try {
        await session.saveLevel?.();
      } catch (e) {
        // Refused, the level stays as it was; a wire error (the store out of reach) is answered as /mcp
        // answers it before any transport is involved: -32000 with bermd's code in `data`.
        session.level = previous;
        if (e instanceof ApiError) throw new ProtocolError(STORE_REFUSED_RPC_CODE, e.message, { code: e.code });
        throw e;
      }
      return {};
    });
  }
  return server;
}

/** What the prompt, resource and completion handlers need of the core; a core without a runtime for them (a test's) runs nothing. */
function surfaceCore(core: McpCore): SurfaceCore {
  return {
    catalog: core.catalog,
    resourceUris: core.resourceUris ?? 'berm',
    runExport:
      core.runExport ??
      (async () => ({ error: { code: 'internal', message: 'this server runs no harness exports' }, reached: { tools: [], events: [] } })),
  };
}

/** The MCP server of one 2025-era session. */
export function buildMcpServer(core: McpCore, session: SessionState = {}): Server {
  return build(core, { generation: 'legacy', session });
}

/** The MCP server of one 2026-07-28 request (built per request by the stateless handler). */
export function buildStatelessMcpServer(core: McpCore): Server {
  return build(core, { generation: 'modern' });
}
