// HTTP requests as a browser page (or anyone) can shape them: node:http lets a test set the Host and
// Origin headers that fetch() would choose itself.
import http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

/** Sends one request to the daemon at `base` (its URL) on a fresh connection and reads the whole answer. */
export function rawRequest(base: string, request: RawRequest): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method: request.method ?? 'GET', path: request.path, headers: request.headers, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

/** What a POST to /mcp carries, whatever it holds. */
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The protocol generation raw requests speak. */
export const MCP_PROTOCOL = '2025-06-18';

/** An `initialize` request, as a client outside the SDK writes it. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: MCP_PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
