/**
 * The MCP server of one session, over the deployed set: built without a transport, so it runs as well
 * over the SDK's in-memory pair as over Streamable HTTP (`http.ts`). The low-level `Server` is used
 * because the tool set changes under it and its schemas are JSON Schema from images, not zod.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type CallToolResult,
  type LoggingLevel,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Use } from '../deploy/index.js';
import type { CallOptions, CallOutcome } from '../runtime/index.js';
import { harnessOfUsageUri, USAGE_MIME_TYPE, usageUri, type CatalogTool, type ToolCatalog } from './catalog.js';

/** The level an accepted `berm.emit` is sent at: an event is normal but significant, which is RFC 5424's notice. */
export const EVENT_LOG_LEVEL: LoggingLevel = 'notice';

/** MCP's "resource not found" (the specification's own code; the SDK names none). */
export const RESOURCE_NOT_FOUND = -32002;

const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

export type EventMessage = LoggingMessageNotification['params'];

/** What every session's server shares: the deployed set, how to run a tool, and where usage and events go. */
export interface McpCore {
  catalog: ToolCatalog;
  call(harness: string, tool: string, args: unknown, options: CallOptions): Promise<CallOutcome>;
  recordUse(harness: string, use: Use): void;
  logger: Logger;
  /** bermd's version, for `serverInfo`. */
  version: string;
  /** Sends an accepted event to every other session that asked for logs; `from` receives it with the result of its call. */
  broadcastEvent(message: EventMessage, from: SessionState): void;
}

/** What a session's server keeps about its client. */
export interface SessionState {
  /** Set by `logging/setLevel`; until then the session receives no log messages. */
  level?: LoggingLevel;
}

/** Whether a session at `state.level` receives a message at `level`. */
export function wantsLog(state: SessionState, level: LoggingLevel): boolean {
  return state.level !== undefined && SEVERITY.get(level)! >= SEVERITY.get(state.level)!;
}

export function instructionsFor(separator: string): string {
  return `Each tool is named {harness}${separator}{tool}; before choosing among one harness's tools, read its usage at berm://{harness}/usage when it is listed.`;
}

function failure(message: string, code: string, path?: string): CallToolResult {
  const error: Record<string, string> = { code };
  if (path !== undefined) error.path = path;
  return { content: [{ type: 'text', text: message }], isError: true, _meta: { 'berm/error': error } };
}

/** A call's outcome as MCP answers it: the JSON as text, plus `structuredContent` when the tool declares an output schema. */
export function toolResult(tool: CatalogTool, outcome: CallOutcome): CallToolResult {
  if (!('ok' in outcome)) return failure(outcome.error.message, outcome.error.code, outcome.error.path);
  const text = JSON.stringify(outcome.ok);
  if (tool.checkOutput === undefined) return { content: [{ type: 'text', text }] };
  const problem = tool.checkOutput(outcome.ok);
  if (problem !== undefined) {
    return failure(`${tool.name} answered a value its declared returns schema does not allow: ${problem}`, 'bad-result');
  }
  return { content: [{ type: 'text', text }], structuredContent: outcome.ok as Record<string, unknown> };
}

/** How a call's own notifications reach its caller. */
export interface CallChannel {
  signal: AbortSignal;
  notify(message: EventMessage): Promise<void>;
}

/**
 * `tools/call`, shared by the session's server and the HTTP fast path (`fast-call.ts`): looks the whole
 * name up, runs the tool, records what it reached, and answers the tool result. An unknown name is a
 * protocol error (`McpError`, invalid params).
 */
export async function callTool(
  core: McpCore,
  state: SessionState,
  name: string,
  args: unknown,
  channel: CallChannel,
): Promise<CallToolResult> {
  const tool = core.catalog.lookup(name);
  if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  const outcome = await core.call(tool.harness, tool.tool, args ?? {}, {
    signal: channel.signal,
    onEmit: ({ harness, tool: emitter, event, fields }) => {
      core.logger.info({ harness, tool: emitter, event, fields }, 'event');
      const message: EventMessage = { level: EVENT_LOG_LEVEL, logger: harness, data: { event, fields, tool: emitter } };
      if (wantsLog(state, EVENT_LOG_LEVEL)) {
        channel.notify(message).catch((e: unknown) => {
          core.logger.debug({ err: e, harness, event }, 'could not send an event to its caller');
        });
      }
      core.broadcastEvent(message, state);
    },
  });
  if ('error' in outcome && outcome.error.code === 'cancelled')
    core.logger.info({ harness: tool.harness, tool: tool.tool }, 'call cancelled by its caller');
  for (const reached of outcome.reached.tools) core.recordUse(reached.harness, { tool: reached.tool });
  for (const emitted of outcome.reached.events) core.recordUse(emitted.harness, { event: emitted.event });
  return toolResult(tool, outcome);
}

/** The MCP server of one session. */
export function buildMcpServer(core: McpCore, state: SessionState = {}): Server {
  const server = new Server(
    { name: 'bermd', version: core.version },
    {
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, logging: {} },
      instructions: instructionsFor(core.catalog.separator),
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: core.catalog.tools() }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    try {
      return await callTool(core, state, request.params.name, request.params.arguments, {
        signal: extra.signal,
        // Sent with the call, on its response stream, so the caller sees it before the result.
        notify: (message) => extra.sendNotification({ method: 'notifications/message', params: message }),
      });
    } finally {
      // The fast path (fast-call.ts) logs the same line with its own `via`.
      core.logger.debug(
        { session: extra.sessionId, rpc_id: extra.requestId, tool: request.params.name, via: 'transport' },
        'tools/call finished',
      );
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: core.catalog.resources() }));

  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const { uri } = request.params;
    const harness = harnessOfUsageUri(uri);
    const usage = harness === undefined ? undefined : core.catalog.usage(harness);
    if (harness === undefined || usage === undefined) {
      throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
    }
    return { contents: [{ uri: usageUri(harness), mimeType: USAGE_MIME_TYPE, text: usage }] };
  });

  // Replaces the SDK's own handler, which sends log messages to sessions that never asked for them.
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    state.level = request.params.level;
    return {};
  });

  return server;
}
