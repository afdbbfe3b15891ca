/**
 * One HTTP request and its whole answer, over `node:http` (or `node:https`, loaded only for an https
 * address). The client asks nothing more of HTTP: a method, headers, a body in memory, and the status
 * and body back. undici, which the client used before, costs every command that talks to bermd more at
 * start (its index loads every dispatcher, fetch, WebSocket and cache) than the command's own work.
 */
import { Agent, type IncomingMessage, request as httpRequest } from 'node:http';

export interface Exchange {
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  agent: Agent;
}

export interface Exchanged {
  status: number;
  body: Buffer;
}

/** A keep-alive agent for `protocol` (`http:` or `https:`), so a command's several requests share a connection. */
export async function keepAliveAgent(protocol: string): Promise<Agent> {
  if (protocol === 'https:') {
    const https = await import('node:https');
    return new https.Agent({ keepAlive: true });
  }
  return new Agent({ keepAlive: true });
}

/**
 * Sends the request and reads the answer to its end. Rejects with the socket's error (its errno-style
 * `code`: ECONNREFUSED before anything was sent, ECONNRESET when the connection died on the way), which
 * the client sorts into its codes.
 */
export async function exchange(url: URL, { method, headers, body, agent }: Exchange): Promise<Exchanged> {
  const send = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  const sent: Record<string, string | number> = { ...headers };
  if (body !== undefined) sent['content-length'] = body.byteLength;
  return new Promise((resolve, reject) => {
    const req = send(url, { method, headers: sent, agent }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      // The connection closing before the answer's end (`aborted` in older lines, an error in newer).
      res.on('aborted', () => reject(Object.assign(new Error('the answer ended early'), { code: 'ECONNRESET' })));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  });
}
