// The MCP layer without a daemon: a core that calls nothing and logs nothing, for the tests that drive
// sessions and servers in one process.
import { pino } from 'pino';
import { ToolCatalog, type McpCore } from '../dist/mcp/index.js';

/** A core with an empty catalog, whose tools are never called. */
export function quietCore(): McpCore {
  return {
    catalog: new ToolCatalog('.'),
    call: () => Promise.reject(new Error('no tool is called here')),
    recordUse: () => {},
    logger: pino({ level: 'silent' }),
    version: '0.0.0',
    broadcastEvent: () => {},
  };
}
