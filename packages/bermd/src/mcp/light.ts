/**
 * The MCP room's light door: the catalog and a call's outcome as a `tools/call` result, for the
 * embedded runtime, which answers as `/mcp` does without serving it. The room's own door (index.ts)
 * also opens the server, the transports and the fastify plugin, and with them the MCP SDK, which a
 * `crab run` would pay for at every start and never use.
 */
export { ToolCatalog } from './catalog.js';
export { toolResult } from './tool-result.js';
