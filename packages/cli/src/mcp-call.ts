/**
 * One tool call on a bermd's `/mcp`, as `berm call` makes it: 2026-07-28 requests, each standing alone
 * (no session), asking with the call for the events and log lines its chain reports (every level: bermd
 * sends them on the call's own answer, a Server-Sent Events stream that ends with the result). What went
 * wrong on the way is said as the other `berm` commands say it: bermd unreachable, the token refused, a
 * scope missing.
 *
 * The exchange is spoken here over `node:http`, as `@berm/client` speaks the control API, rather than
 * through the MCP SDK's client: loading that client (zod's schemas, its transports, its validators) took
 * longer than the whole command takes without it, for two or three requests whose shapes are fixed. What
 * the SDK's client would add to them: a `server/discover` probe before the first request (bermd answers
 * the version it does not serve on the request itself), and checking a result against the tool's output
 * schema (bermd checks it before it answers; catalog.ts).
 */
import type { Agent, IncomingMessage } from 'node:http';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import type { ToolEvent, ToolLog } from '@berm/protocol';
import { CliError } from './failure.js';
import { type JSONRPCRequest, META } from './json-rpc.js';
import { challengeOf, mediaType, messageHeaders, POST_ACCEPT } from './mcp-http/headers.js';
import { eventsOf } from './mcp-http/sse.js';

export { mcpNameHeader } from './mcp-http/headers.js';

const GENERATION = '2026-07-28';
/** The least severe level: the call's every log line and event, as crab run reports them. */
const EVERY_LEVEL = 'debug';
/** JSON-RPC's code for invalid params, which bermd answers a tool name it does not list with. */
const INVALID_PARAMS = -32602;
/** How much of an answer that is not bermd's JSON-RPC is quoted: enough to tell a proxy's page from bermd. */
const QUOTED = 300;

/** A tool as bermd lists it: what `berm call` reads of it. */
export type ListedTool = Pick<Tool, 'name' | 'inputSchema'>;

export interface McpCall {
  tools(): Promise<ListedTool[]>;
  /** Calls `name`; `meta` goes in the request's `_meta` beside the log level asked for (an idempotency key). */
  call(
    name: string,
    args: Record<string, unknown>,
    meta?: Record<string, unknown>,
  ): Promise<{ result: CallToolResult; events: ToolEvent[]; logs: ToolLog[] }>;
  close(): Promise<void>;
}

/**
 * A JSON-RPC error bermd answered a request with: a failure under bermd's own code when the error's data
 * names one (`{code: "insufficient-scope", scope}`), else `internal`, bermd having failed without saying why.
 */
export class McpErrorAnswer extends CliError {
  readonly rpc: { code: number; message: string; data?: unknown };

  constructor(url: string, method: string, rpc: { code: number; message: string; data?: unknown }) {
    const data = rpc.data !== null && typeof rpc.data === 'object' ? (rpc.data as Record<string, unknown>) : {};
    const { code, ...details } = data;
    super(typeof code === 'string' ? code : 'internal', `bermd at ${url} answered ${method} with an error (${rpc.code}): ${rpc.message}`, {
      ...details,
      url,
      rpc_code: rpc.code,
    });
    this.rpc = rpc;
  }
}

/** Whether `e` is bermd's answer to a tool name it does not list (deployed or not: its list says which). */
export function isUnknownToolAnswer(e: unknown): boolean {
  return e instanceof McpErrorAnswer && e.rpc.code === INVALID_PARAMS && /unknown tool/i.test(e.rpc.message);
}

/** The JSON-RPC messages of an answer's body: one JSON document, or Server-Sent Events each carrying one. */
export function messagesOf(contentType: string, body: string): unknown[] {
  if (mediaType(contentType) !== 'text/event-stream') return [JSON.parse(body)];
  return eventsOf(body).map((event) => JSON.parse(event.data) as unknown);
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The socket's error as `berm call` reports it: bermd could not be reached. */
function unreachable(url: string, e: NodeJS.ErrnoException): CliError {
  return new CliError(
    'daemon-unreachable',
    `could not reach bermd at ${url} (${e.code ?? e.message}): is it running there? (--url, BERM_URL)`,
    {
      url,
    },
  );
}

/** What a refused or failed answer means for the command line: the token refused, a scope missing, or what bermd said. */
function refusal(url: string, answer: Answer): CliError {
  const { status } = answer;
  const challenge = challengeOf(answer.headers['www-authenticate']);
  if (status === 403 && challenge.error === 'insufficient_scope') {
    const required = challenge.scope;
    return new CliError('insufficient-scope', `bermd at ${url} refused the call: the token lacks ${required ?? 'a scope it needs'}`, {
      url,
      scope: required,
      status: 403,
    });
  }
  if (status === 401) return new CliError('unauthorized', `bermd at ${url} refused the token (401)`, { url, status });
  let said: string | undefined;
  try {
    const error = (JSON.parse(answer.body) as { error?: { message?: unknown } } | null)?.error;
    if (typeof error?.message === 'string') said = error.message;
  } catch {
    // not bermd's JSON-RPC: the body itself is quoted
  }
  const text = said ?? answer.body;
  const quoted = text.length > QUOTED ? `${text.slice(0, QUOTED)}...` : text;
  return new CliError('unexpected-response', `bermd at ${url} answered ${status}: ${quoted}`, { url, status });
}

export async function openMcpCall(url: string, token: string | undefined): Promise<McpCall> {
  const endpoint = new URL('/mcp', url);
  const http = endpoint.protocol === 'https:' ? await import('node:https') : await import('node:http');
  // The listing and the call share a connection.
  const agent: Agent = new http.Agent({ keepAlive: true });
  let ids = 0;

  /** Sends one request and reads its whole answer (a stateless request's stream ends with its result). */
  const post = (message: JSONRPCRequest): Promise<Answer> => {
    const body = JSON.stringify(message);
    // The headers the request's `_meta` asks for (its version, method and name), as the relay sends them.
    const headers: Record<string, string | number> = {
      ...messageHeaders(message),
      'content-type': 'application/json',
      accept: POST_ACCEPT,
      'content-length': Buffer.byteLength(body),
    };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    return new Promise((resolve, reject) => {
      const req = http.request(endpoint, { method: 'POST', headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('aborted', () => reject(unreachable(url, Object.assign(new Error('the answer ended early'), { code: 'ECONNRESET' }))));
        res.on('error', (e) => reject(unreachable(url, e)));
      });
      req.on('error', (e) => reject(unreachable(url, e)));
      req.end(body);
    });
  };

  /** `method`'s result, with the notifications that came before it; throws what a refusal or an error answer means. */
  const request = async (
    method: string,
    params: Record<string, unknown>,
  ): Promise<{ result: Record<string, unknown>; notes: unknown[] }> => {
    const meta = (params._meta ?? {}) as Record<string, unknown>;
    const id = ++ids;
    const answer = await post({
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          ...meta,
          [META.protocolVersion]: GENERATION,
          [META.clientInfo]: { name: 'berm-call', version: '0' },
          [META.clientCapabilities]: {},
        },
      },
    });
    if (answer.status < 200 || answer.status >= 300) throw refusal(url, answer);
    let messages: unknown[];
    try {
      messages = messagesOf(String(answer.headers['content-type'] ?? ''), answer.body);
    } catch {
      throw new CliError('unexpected-response', `bermd at ${url} answered ${method} with what is not JSON-RPC`, { url });
    }
    const notes: unknown[] = [];
    for (const message of messages) {
      const m = message as {
        id?: unknown;
        method?: unknown;
        result?: unknown;
        error?: { code?: unknown; message?: unknown; data?: unknown };
      };
      if (m?.id !== id) {
        if (typeof m?.method === 'string') notes.push(m);
        continue;
      }
      if (m.error !== undefined && Number.isInteger(m.error.code) && typeof m.error.message === 'string')
        throw new McpErrorAnswer(url, method, { code: m.error.code as number, message: m.error.message, data: m.error.data });
      if (m.result !== null && typeof m.result === 'object') return { result: m.result as Record<string, unknown>, notes };
      break;
    }
    throw new CliError('unexpected-response', `bermd at ${url} answered ${method} without its result`, { url });
  };

  return {
    async tools() {
      const out: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const { result } = await request('tools/list', cursor === undefined ? {} : { cursor });
        if (!Array.isArray(result.tools))
          throw new CliError('unexpected-response', `bermd at ${url} answered tools/list without tools`, { url });
        out.push(...(result.tools as ListedTool[]));
        cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
      } while (cursor !== undefined);
      return out;
    },
    async call(name, args, meta = {}) {
      const { result, notes } = await request('tools/call', { name, arguments: args, _meta: { ...meta, [META.logLevel]: EVERY_LEVEL } });
      if (!Array.isArray(result.content))
        throw new CliError('unexpected-response', `bermd at ${url} answered tools/call without content`, { url });
      const events: ToolEvent[] = [];
      const logs: ToolLog[] = [];
      for (const note of notes as Array<{ method: string; params?: { logger?: unknown; level?: unknown; data?: unknown } }>) {
        if (note.method !== 'notifications/message') continue;
        const data = note.params?.data as
          | { event?: unknown; fields?: unknown; tool?: unknown; level?: unknown; message?: unknown }
          | undefined;
        const harness = note.params?.logger;
        if (typeof harness !== 'string' || typeof data?.tool !== 'string') continue;
        if (typeof data.event === 'string') events.push({ harness, tool: data.tool, event: data.event, fields: data.fields });
        else if (typeof data.message === 'string')
          logs.push({
            harness,
            tool: data.tool,
            level: typeof data.level === 'string' ? data.level : String(note.params?.level),
            message: data.message,
          });
      }
      return { result: result as CallToolResult, events, logs };
    },
    async close() {
      agent.destroy();
    },
  };
}
