// MCP clients of a running bermd for the /mcp tests: the SDK's Client over Streamable HTTP, with
// each notification kind turned into something a test can await.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
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

/** The text of a tool result's single text content. */
export function textOf(result: CallToolResult): string {
  const [first, ...rest] = result.content;
  if (first?.type !== 'text' || rest.length > 0) throw new Error(`expected one text content, got ${JSON.stringify(result.content)}`);
  return first.text;
}

/** A successful tool result's value, parsed from its text. */
export function valueOf(result: CallToolResult): unknown {
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
