// The bare server the /mcp benchmarks measure bermd against (bench/mcp.js, bench/gc.js).
import { startServer } from './daemon.js';
import { MODERN } from './mcp.js';

// The bare server: node:http answering every POST to /mcp with the same result shape bermd sends for
// the echo tool in each generation, and nothing else: on a session, a session id on initialize and the
// result as one SSE event; in 2026-07-28, one JSON body with the result's resultType and serverInfo.
const BARE = `
import { createServer } from 'node:http';
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (msg.id === undefined) { res.writeHead(202).end(); return; }
    if (req.headers['mcp-protocol-version'] === '${MODERN}') {
      const result = { content: [{ type: 'text', text: JSON.stringify(msg.params.arguments) }], resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'bare', version: '0' } } };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result, jsonrpc: '2.0', id: msg.id }));
      return;
    }
    const result = msg.method === 'initialize'
      ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bare', version: '0' } }
      : { content: [{ type: 'text', text: JSON.stringify(msg.params.arguments) }] };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'mcp-session-id': 'bare' });
    res.end('event: message\\ndata: ' + JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }) + '\\n\\n');
  });
});
server.listen(0, '127.0.0.1', () => console.log('bare listening on http://127.0.0.1:' + server.address().port + ' '));
`;

/** Starts the bare server; `nodeArgs` go to its node before the script (a probe to load), `env` is its environment. */
export function startBare(nodeArgs = [], env = process.env) {
  return startServer([...nodeArgs, '--input-type=module', '-e', BARE], /bare listening on (http:\/\/\S+) /, env);
}
