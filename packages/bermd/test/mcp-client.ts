// MCP clients of a running bermd for the /mcp tests, with each notification kind turned into something
// a test can await: the 1.x SDK's Client (2025-11-25, what most hosts still embed) and the v2 SDK's
// Client pinned to 2026-07-28, both over Streamable HTTP; and what a raw 2026-07-28 request carries.
import http from 'node:http';
import { expect } from 'vitest';
import {
  Client as ModernClient,
  type McpSubscription,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';

/** Counts notifications of one kind and resolves waits for the n-th. */
export class Arrivals<T = void> {
  readonly received: T[] = [];
  private readonly waiters: Array<{ count: number; resolve: () => void }> = [];

  push(value: T): void {
    this.received.push(value);
    for (const w of [...this.waiters]) {
      if (this.received.length >= w.count) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }

  /** Resolves once `count` have arrived in all (at once if they already have). */
  reach(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  /** Resolves when one more than now has arrived. */
  next(): Promise<void> {
    return this.reach(this.received.length + 1);
  }
}

export interface McpConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  toolsChanged: Arrivals;
  resourcesChanged: Arrivals;
  messages: Arrivals<LoggingMessageNotification['params']>;
  close(): Promise<void>;
}

export async function connect(baseUrl: string, headers: Record<string, string> = {}): Promise<McpConnection> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers } });
  const client = new Client({ name: 'bermd-test', version: '0.0.0' });
  const toolsChanged = new Arrivals();
  const resourcesChanged = new Arrivals();
  const messages = new Arrivals<LoggingMessageNotification['params']>();
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => toolsChanged.push());
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resourcesChanged.push());
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => messages.push(n.params));
  await client.connect(transport);
  return {
    client,
    transport,
    toolsChanged,
    resourcesChanged,
    messages,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** The stateless protocol generation. */
export const MODERN = '2026-07-28';

export interface ModernConnection {
  client: ModernClient;
  toolsChanged: Arrivals;
  resourcesChanged: Arrivals;
  messages: Arrivals<LoggingMessageNotification['params']>;
  /** Opens a `subscriptions/listen` for both list changes; resolves once bermd has acknowledged it. */
  listen(): Promise<McpSubscription>;
  close(): Promise<void>;
}

/** A 2026-07-28 client of `baseUrl`'s /mcp (the v2 SDK's, pinned: it fails rather than fall back to a session). */
export async function connectModern(baseUrl: string, headers: Record<string, string> = {}): Promise<ModernConnection> {
  const client = new ModernClient({ name: 'bermd-test-2026', version: '0.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  const toolsChanged = new Arrivals();
  const resourcesChanged = new Arrivals();
  const messages = new Arrivals<LoggingMessageNotification['params']>();
  client.setNotificationHandler('notifications/tools/list_changed', () => toolsChanged.push());
  client.setNotificationHandler('notifications/resources/list_changed', () => resourcesChanged.push());
  client.setNotificationHandler('notifications/message', (n) => messages.push(n.params as LoggingMessageNotification['params']));
  await client.connect(new ModernTransport(new URL('/mcp', baseUrl), { requestInit: { headers } }));
  const subscriptions: McpSubscription[] = [];
  return {
    client,
    toolsChanged,
    resourcesChanged,
    messages,
    listen: async () => {
      const subscription = await client.listen({ toolsListChanged: true, resourcesListChanged: true });
      subscriptions.push(subscription);
      return subscription;
    },
    close: async () => {
      await Promise.all(subscriptions.map((s) => s.close().catch(() => {})));
      await client.close();
    },
  };
}

/** The `_meta` a raw 2026-07-28 request carries: its protocol version and its client's capabilities and name. */
export function envelope(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
    ...extra,
  };
}

/** The headers a raw 2026-07-28 POST carries: its version, its method, and the name it calls or reads. */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
  };
  if (name !== undefined) headers['mcp-name'] = name;
  return headers;
}

/** A tool result as either SDK types it: what these helpers read of one. */
export interface AnyToolResult {
  content: ReadonlyArray<{ type: string; text?: string }>;
  isError?: boolean;
}

/** The text of a tool result's single text content. */
export function textOf(result: AnyToolResult): string {
  const [first, ...rest] = result.content;
  if (first?.type !== 'text' || first.text === undefined || rest.length > 0)
    throw new Error(`expected one text content, got ${JSON.stringify(result.content)}`);
  return first.text;
}

/** A successful tool result's value, parsed from its text. */
export function valueOf(result: AnyToolResult): unknown {
  if (result.isError) throw new Error(`expected a result, got the error ${textOf(result)}`);
  return JSON.parse(textOf(result));
}

export function put(url: string, bytes: Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/wasm', ...headers } });
}

/** Deploys and fails loudly when bermd refuses. */
export async function deploy(baseUrl: string, name: string, bytes: Uint8Array, headers: Record<string, string> = {}): Promise<void> {
  const res = await put(`${baseUrl}/harnesses/${name}`, bytes, headers);
  if (res.status !== 200 && res.status !== 201) throw new Error(`deploy ${name}: ${res.status} ${await res.text()}`);
}

export async function undeploy(baseUrl: string, name: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(`${baseUrl}/harnesses/${name}`, { method: 'DELETE', headers });
  if (res.status !== 204) throw new Error(`undeploy ${name}: ${res.status} ${await res.text()}`);
}

/** An HTTP answer as a test compares it: the headers that say what it is (not when or how long), and its text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers that name the moment or the length of one answer rather than what it is. */
export const VARYING = new Set(['date', 'content-length', 'transfer-encoding', 'keep-alive']);

/** A raw request to `/mcp` on node:http, whose answer is read whole, headers as sent. */
export function post(
  base: string,
  headers: Record<string, string>,
  body: unknown,
  method = 'POST',
  signal?: AbortSignal,
): Promise<RawResponse> {
  const url = new URL('/mcp', base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method, headers, signal }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const kept: Record<string, string> = {};
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!.toLowerCase();
          if (!VARYING.has(name)) kept[name] = res.rawHeaders[i + 1]!;
        }
        resolve({ status: res.statusCode!, headers: kept, body: text });
      });
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * An SSE body as its frames, each checked to be exactly `event: message` and one `data:` line (what the
 * SDK's client and every EventSource parser read), with the data parsed: JSON's key order is no part of
 * what a client sees.
 */
export function frames(body: string): Array<Record<string, unknown>> {
  expect(body.endsWith('\n\n')).toBe(true);
  return body
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      const lines = frame.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toBe('event: message');
      expect(lines[1]!.startsWith('data: ')).toBe(true);
      return JSON.parse(lines[1]!.slice('data: '.length)) as Record<string, unknown>;
    });
}

/** An answer's JSON-RPC messages: the one JSON body, or each SSE frame's. */
export function messages(res: RawResponse): Array<Record<string, unknown>> {
  return res.headers['content-type']?.startsWith('text/event-stream')
    ? frames(res.body)
    : [JSON.parse(res.body) as Record<string, unknown>];
}
