/**
 * One tool call on a bermd's `/mcp`, as `berm call` makes it: the official MCP client pinned to the
 * 2026-07-28 generation, so each request stands alone (no session), asking with the call for the events
 * and log lines its chain reports (every level: bermd sends them on the call's own answer). What went wrong on the way
 * is said as the other `berm` commands say it: bermd unreachable, the token refused, a scope missing.
 */
import {
  Client,
  type CallToolResult,
  InsufficientScopeError,
  LOG_LEVEL_META_KEY,
  StreamableHTTPClientTransport,
  type Tool,
} from '@modelcontextprotocol/client';
import type { ToolEvent, ToolLog } from '@berm/protocol';
import { CliError } from './failure.js';
import { describe, statusOf } from './mcp-failure.js';

const GENERATION = '2026-07-28';
/** The least severe level: the call's every log line and event, as crab run reports them. */
const EVERY_LEVEL = 'debug';
/** bermd stops a call at its own limit; the client waits as long as bermd lets the call run. */
const NO_CLIENT_TIMEOUT_MS = 2 ** 31 - 1;

export interface McpCall {
  tools(): Promise<Tool[]>;
  /** Calls `name`; `meta` goes in the request's `_meta` beside the log level asked for (an idempotency key). */
  call(
    name: string,
    args: Record<string, unknown>,
    meta?: Record<string, unknown>,
  ): Promise<{ result: CallToolResult; events: ToolEvent[]; logs: ToolLog[] }>;
  close(): Promise<void>;
}

/** What a failed request to bermd at `url` means for the command line. */
export function sendFailure(url: string, e: unknown): unknown {
  if (e instanceof CliError) return e;
  const cause = (e as { cause?: { code?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string' || (e instanceof Error && /fetch failed/.test(e.message)))
    return new CliError('daemon-unreachable', `could not reach bermd at ${url} (${describe(e)}): is it running there? (--url, BERM_URL)`, {
      url,
    });
  if (InsufficientScopeError.isInstance(e))
    return new CliError(
      'insufficient-scope',
      `bermd at ${url} refused the call: the token lacks ${e.requiredScope ?? 'a scope it needs'}`,
      {
        url,
        scope: e.requiredScope,
        status: 403,
      },
    );
  const status = statusOf(e);
  if (status === 401) return new CliError('unauthorized', `bermd at ${url} refused the token (401)`, { url, status });
  if (status !== undefined) return new CliError('unexpected-response', `bermd at ${url} ${describe(e)}`, { url, status });
  return e;
}

export async function openMcpCall(url: string, token: string | undefined): Promise<McpCall> {
  const endpoint = new URL('/mcp', url);
  const client = new Client({ name: 'berm-call', version: '0' }, { versionNegotiation: { mode: { pin: GENERATION } } });
  const events: ToolEvent[] = [];
  const logs: ToolLog[] = [];
  client.setNotificationHandler('notifications/message', (n) => {
    const data = n.params.data as { event?: unknown; fields?: unknown; tool?: unknown; level?: unknown; message?: unknown } | undefined;
    const harness = n.params.logger;
    if (typeof harness !== 'string' || typeof data?.tool !== 'string') return;
    if (typeof data.event === 'string') events.push({ harness, tool: data.tool, event: data.event, fields: data.fields });
    else if (typeof data.message === 'string')
      logs.push({ harness, tool: data.tool, level: typeof data.level === 'string' ? data.level : n.params.level, message: data.message });
  });
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  try {
    await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }));
  } catch (e) {
    await client.close().catch(() => {});
    throw sendFailure(url, e);
  }
  return {
    async tools() {
      const out: Tool[] = [];
      let cursor: string | undefined;
      try {
        do {
          const page = await client.listTools(cursor === undefined ? {} : { cursor });
          out.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
      } catch (e) {
        throw sendFailure(url, e);
      }
      return out;
    },
    async call(name, args, meta = {}) {
      events.length = 0;
      logs.length = 0;
      try {
        const result = (await client.callTool(
          { name, arguments: args, _meta: { ...meta, [LOG_LEVEL_META_KEY]: EVERY_LEVEL } },
          { timeout: NO_CLIENT_TIMEOUT_MS },
        )) as CallToolResult;
        return { result, events: [...events], logs: [...logs] };
      } catch (e) {
        throw sendFailure(url, e);
      }
    },
    close: () => client.close(),
  };
}
