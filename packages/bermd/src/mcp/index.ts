export { ToolCatalog, usageUri, harnessOfUsageUri, USAGE_MIME_TYPE, type CatalogTool, type CatalogEntry } from './catalog.js';
export { compileOutputCheck, type OutputCheck } from './output-check.js';
export {
  buildMcpServer,
  callTool,
  toolResult,
  instructionsFor,
  wantsLog,
  EVENT_LOG_LEVEL,
  RESOURCE_NOT_FOUND,
  type McpCore,
  type SessionState,
  type EventMessage,
} from './server.js';
export { McpSessions, Session, SessionCapError, SESSION_IDLE_MS, MAX_SESSIONS } from './sessions.js';
export { createMcpEndpoint, MCP_PATH, MAX_MCP_BODY, type McpEndpoint, type McpEndpointOptions } from './plugin.js';
export { ANSWERERS, fastCall, sdkTransport, type McpAnswerer, type McpExchange } from './transport.js';
