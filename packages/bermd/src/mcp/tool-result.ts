/**
 * A call's outcome as a `tools/call` result. Apart from the server (server.ts) because the embedded
 * runtime answers its calls with it too, and must not load the MCP SDK to do so: this module takes
 * only the SDK's types.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { CallOutcome } from '../runtime/index.js';
import type { CatalogTool, Generation } from './catalog.js';

function failure(message: string, code: string, path?: string): CallToolResult {
  const error: Record<string, string> = { code };
  if (path !== undefined) error.path = path;
  return { content: [{ type: 'text', text: message }], isError: true, _meta: { 'berm/error': error } };
}

/**
 * A call's outcome as MCP answers it: the JSON as text, plus `structuredContent` when the tool lists
 * an output schema to a client of `generation` (an object `returns` for every client, any `returns`
 * for 2026-07-28 ones), checked against that schema first.
 */
export function toolResult(tool: CatalogTool, outcome: CallOutcome, generation: Generation): CallToolResult {
  if (!('ok' in outcome)) return failure(outcome.error.message, outcome.error.code, outcome.error.path);
  // The guest's own blocks (checked by the runtime against the kinds its tool declares) replace the value's text.
  const content = (outcome.content as CallToolResult['content'] | undefined) ?? [{ type: 'text', text: JSON.stringify(outcome.ok) }];
  const structured = generation === 'modern' || tool.structuredForLegacy;
  if (tool.checkOutput === undefined || !structured) return { content };
  const problem = tool.checkOutput(outcome.ok);
  if (problem !== undefined) {
    return failure(`${tool.name} answered a value its declared returns schema does not allow: ${problem}`, 'bad-result');
  }
  return { content, structuredContent: outcome.ok as Record<string, unknown> };
}
