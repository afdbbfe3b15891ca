/**
 * The page's MCP client: JSON-RPC over fetch to `/mcp`, as the Streamable HTTP transport defines it
 * (initialize, then requests carrying `mcp-session-id`; an answer is JSON or an event stream whose
 * messages end with the response). Hand-written because the official SDK's browser client
 * (Client + StreamableHTTPClientTransport) bundles to 89 KB gzipped, most of the page's 100 KB budget,
 * for the four requests the page makes.
 */
import { ApiError } from './api.js';
import { readSse } from './sse.js';
import { authHeaders } from './credentials.js';
import type { ToolSpec } from './types.js';

const PROTOCOL_VERSION = '2025-06-18';

export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: { readOnlyHint?: boolean };
  _meta?: { 'berm/harness'?: string; 'berm/tool'?: string };
}

const DEPRECATED = 'Deprecated. ';

/** A listed tool as the manifest declares it, as far as `tools/list` says: for a principal that may call it without reading the control API. */
export function specOf(listed: ListedTool): ToolSpec {
  // bermd lists a deprecated tool with its description after this mark (mcp/catalog.ts).
  const description = listed.description ?? '';
  const deprecated = description.startsWith(DEPRECATED);
  return {
    name: listed._meta?.['berm/tool'] ?? listed.name,
    description: deprecated ? description.slice(DEPRECATED.length) : description,
    ...(deprecated ? { deprecated: true } : {}),
    arguments: (listed.inputSchema ?? {}) as ToolSpec['arguments'],
    ...(listed.outputSchema === undefined ? {} : { returns: listed.outputSchema as ToolSpec['returns'] }),
    ...(listed.annotations?.readOnlyHint === true ? { query: true } : {}),
  };
}

/** An event the call emitted (bermd sends them as `notifications/message` at level notice). */
export interface EmittedEvent {
  harness: string;
  event: string;
  tool: string;
  fields: unknown;
}

/**
 * How a call ended: a result; Failed (the tool ran and failed: `isError` with a runtime code such as
 * `guest-error`, `trap`, `timeout`); or Refused (nothing ran: arguments the daemon's check refused,
 * or a name it does not serve).
 */
export type CallOutcome =
  | { kind: 'result'; value: unknown; events: EmittedEvent[] }
  | { kind: 'failed'; code: string; message: string; events: EmittedEvent[] }
  | { kind: 'refused'; code: string; message: string; path?: string; events: EmittedEvent[] };

/** The runtime's codes for a call refused before its guest ran (packages/bermd/src/runtime/errors.ts). */
const REFUSED_CODES = new Set(['invalid-arguments', 'unknown-harness', 'unknown-tool']);

interface RpcResponse {
  id?: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

interface RpcAnswer {
  response: RpcResponse;
  notifications: { method: string; params?: Record<string, unknown> }[];
}

class SessionGone extends Error {}

export class McpClient {
  private session: Promise<string> | undefined;
  private nextId = 1;

  /** Drops the MCP session: it belongs to the principal that opened it, and the page signed out. */
  forget(): void {
    this.session = undefined;
  }

  /** Every tool `/mcp` lists. */
  async listTools(): Promise<ListedTool[]> {
    const { response } = await this.request('tools/list', {});
    if (response.error) throw new Error(`tools/list: ${response.error.message}`);
    return (response.result?.tools ?? []) as ListedTool[];
  }

  /** Calls tool `tool` of harness `harness`, found by the harness and tool each listed name stands for. */
  async callTool(harness: string, tool: string, args: unknown): Promise<CallOutcome> {
    const listed = (await this.listTools()).find((t) => t._meta?.['berm/harness'] === harness && t._meta?.['berm/tool'] === tool);
    // Not listed: the name with the default separator, which bermd can only refuse, so its answer is shown.
    const name = listed?.name ?? `${harness}.${tool}`;
    const { response, notifications } = await this.request('tools/call', { name, arguments: args });
    const events = notifications.filter((n) => n.method === 'notifications/message').map((n) => eventOf(n.params ?? {}));
    if (response.error) return { kind: 'refused', code: `JSON-RPC ${response.error.code}`, message: response.error.message, events };
    const result = response.result ?? {};
    const text = ((result.content ?? []) as { type: string; text?: string }[])
      .filter((c) => c.type === 'text')
      .map((c) => c.text ?? '')
      .join('\n');
    if (result.isError === true) {
      const meta = ((result._meta as Record<string, unknown> | undefined)?.['berm/error'] ?? {}) as { code?: string; path?: string };
      const code = meta.code ?? 'error';
      if (REFUSED_CODES.has(code)) return { kind: 'refused', code, message: text, path: meta.path, events };
      return { kind: 'failed', code, message: text, events };
    }
    let value: unknown = result.structuredContent;
    if (value === undefined) {
      try {
        value = JSON.parse(text);
      } catch {
        value = text;
      }
    }
    return { kind: 'result', value, events };
  }

  private async request(method: string, params: unknown): Promise<RpcAnswer> {
    try {
      return await this.post(await this.open(), { jsonrpc: '2.0', id: this.nextId++, method, params });
    } catch (e) {
      if (!(e instanceof SessionGone)) throw e;
      // Sessions end after 30 idle minutes or a daemon restart: one new session, then the request again.
      this.session = undefined;
      return this.post(await this.open(), { jsonrpc: '2.0', id: this.nextId++, method, params });
    }
  }

  private open(): Promise<string> {
    this.session ??= this.initialize().catch((e: unknown) => {
      this.session = undefined;
      throw e;
    });
    return this.session;
  }

  private async initialize(): Promise<string> {
    const init = await fetch('/mcp', {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: this.nextId++,
        method: 'initialize',
        params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bermd-page', version: '1' } },
      }),
    });
    await failIfNotOk(init);
    const session = init.headers.get('mcp-session-id');
    const answer = await readAnswer(init);
    if (session === null || answer.response.error)
      throw new Error(`/mcp did not start a session: ${answer.response.error?.message ?? 'no session id'}`);
    await this.post(session, { jsonrpc: '2.0', method: 'notifications/initialized' });
    // Events reach only sessions that asked for log messages at notice or below.
    await this.post(session, { jsonrpc: '2.0', id: this.nextId++, method: 'logging/setLevel', params: { level: 'notice' } });
    return session;
  }

  private async post(session: string, message: { id?: number } & Record<string, unknown>): Promise<RpcAnswer> {
    const response = await fetch('/mcp', {
      method: 'POST',
      headers: { ...this.headers(), 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL_VERSION },
      body: JSON.stringify(message),
    });
    if (response.status === 404) throw new SessionGone();
    await failIfNotOk(response);
    if (message.id === undefined) return { response: {}, notifications: [] };
    return readAnswer(response, message.id);
  }

  private headers(): Record<string, string> {
    return { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...authHeaders() };
  }
}

async function failIfNotOk(response: Response): Promise<void> {
  if (response.ok) return;
  const text = await response.text();
  let message = `/mcp answered ${response.status}`;
  let code = 'mcp-error';
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: string } };
    if (typeof body.error?.message === 'string') message = body.error.message;
    if (typeof body.error?.code === 'string') code = body.error.code;
  } catch {
    // not JSON
  }
  throw new ApiError(response.status, { code, message });
}

/** The response to request `id` (or the only one), and the notifications sent ahead of it. */
async function readAnswer(response: Response, id?: number): Promise<RpcAnswer> {
  const notifications: RpcAnswer['notifications'] = [];
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { response: (await response.json()) as RpcResponse, notifications };
  }
  if (response.body === null) throw new Error('/mcp answered an empty stream');
  for await (const message of readSse(response.body)) {
    if (message.data === '') continue;
    const parsed = JSON.parse(message.data) as RpcResponse & { method?: string; params?: Record<string, unknown> };
    if (parsed.method !== undefined && parsed.id === undefined) notifications.push({ method: parsed.method, params: parsed.params });
    else if (id === undefined || parsed.id === id) return { response: parsed, notifications };
  }
  throw new Error('/mcp ended the stream before answering');
}

function eventOf(params: Record<string, unknown>): EmittedEvent {
  const data = (params.data ?? {}) as { event?: string; fields?: unknown; tool?: string };
  return { harness: String(params.logger ?? ''), event: String(data.event ?? ''), tool: String(data.tool ?? ''), fields: data.fields };
}

/** The page's one MCP client, opened on the first request. */
export const mcp = new McpClient();
