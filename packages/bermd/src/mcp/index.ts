export { ToolCatalog, usageUri, harnessOfUsageUri, USAGE_MIME_TYPE, type CatalogTool, type CatalogEntry } from './catalog.js';
export { compileOutputCheck, type OutputCheck } from './output-check.js';
export {
  buildMcpServer,
  toolResult,
  instructionsFor,
  wantsLog,
  EVENT_LOG_LEVEL,
  RESOURCE_NOT_FOUND,
  type McpCore,
  type SessionState,
  type EventMessage,
} from './server.js';
export { McpSessions, Session, SESSION_IDLE_MS } from './sessions.js';
export { registerMcpRoutes, MCP_PATH, MAX_MCP_BODY, type McpRoutesOptions } from './http.js';
