export {
  ToolCatalog,
  usageUri,
  harnessOfUsageUri,
  USAGE_MIME_TYPE,
  type CatalogTool,
  type CatalogEntry,
  type Generation,
} from './catalog.js';
export { toolResult } from './tool-result.js';
export { compileOutputCheck, type OutputCheck } from './output-check.js';
export {
  buildMcpServer,
  buildStatelessMcpServer,
  callTool,
  instructionsFor,
  wantsLog,
  CACHE_HINTS,
  EVENT_LOG_LEVEL,
  type McpCore,
  type SessionState,
  type EventMessage,
} from './server.js';
export { McpSessions, Session, SessionCapError, SESSION_IDLE_MS, MAX_SESSIONS, sessionKey } from './sessions.js';
export { restoreInitialized } from './session-restore.js';
export { MAX_LISTENS, StatelessMcp, type StatelessOptions } from './stateless.js';
export { createMcpEndpoint, MCP_PATH, MAX_MCP_BODY, type McpEndpoint, type McpEndpointOptions } from './plugin.js';
export { fastCall, mcpPaths, sdkTransport, type McpAnswerer, type McpExchange, type McpPaths } from './transport.js';
export { CachedRouting, sdkRouting, type McpRouting } from './routing.js';
export { Receipts, IDEMPOTENCY_KEY_META, REPLAYED_META, type ReceiptsOptions, type WriteCall } from './receipts.js';
