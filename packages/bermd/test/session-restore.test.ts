// A 2025 session rebuilt on a replica that did not answer its initialize (mcp/session-restore.ts) reaches
// into the MCP SDK's transport and server: this drives a rebuilt transport over real HTTP with the SDK
// version the lockfile pins, so an SDK that moves what it touches fails here.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { expect, it } from 'vitest';
import { buildMcpServer, restoreInitialized } from '../dist/mcp/index.js';
import { quietCore } from './mcp-core.js';

const core = quietCore();

it('a rebuilt transport answers its session id over HTTP, refuses another, and its server knows the client', async () => {
  const id = 'a-session-answered-elsewhere';
  const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: () => id });
  const server = buildMcpServer(core);
  await server.connect(transport);
  await restoreInitialized(transport, server, id, {
    protocolVersion: '2025-06-18',
    capabilities: { roots: {} },
    clientInfo: { name: 'elsewhere', version: '1.2.3' },
  });
  expect(server.getClientVersion()).toEqual({ name: 'elsewhere', version: '1.2.3' });
  expect(server.getClientCapabilities()).toEqual({ roots: {} });
  expect(server.getNegotiatedProtocolVersion()).toBe('2025-06-18');

  const httpServer = http.createServer((req, res) => void transport.handleRequest(req, res));
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
  const ping = (session: string): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-06-18',
        'mcp-session-id': session,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }),
    });
  try {
    const answered = await ping(id);
    expect(answered.status).toBe(200);
    expect(answered.headers.get('mcp-session-id')).toBe(id);
    expect(await answered.text()).toContain('"id":7');
    const other = await ping('another-session');
    expect(other.status).toBe(404);
    await other.body?.cancel();
  } finally {
    await server.close();
    await new Promise((resolve) => httpServer.close(resolve));
  }
});
