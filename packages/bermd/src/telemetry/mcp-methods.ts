/**
 * The MCP methods the `mcp.method.name` attribute may hold: the requests a client sends a server, in
 * both generations. Anything else is `_OTHER`, as the semantic conventions ask of an unknown value,
 * so a client inventing method names adds no series.
 */
const METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'logging/setLevel',
  'completion/complete',
  'server/discover',
  'subscriptions/listen',
]);

export function methodLabel(method: unknown): string {
  return typeof method === 'string' && METHODS.has(method) ? method : '_OTHER';
}
