import type { ToolSpec } from '../types.js';
import type { Break } from './codes.js';
import { oneLine } from './describe.js';

/** The content kinds a tool declares; a malformed member (breaks() takes unvalidated manifests too) declares none. */
function kindsOf(tool: ToolSpec): string[] {
  return Array.isArray(tool.content)
    ? tool.content.filter((k): k is NonNullable<ToolSpec['content']>[number] => typeof k === 'string')
    : [];
}

/**
 * A content kind old declared and next does not (`content-removed`): a caller that reads, say, the
 * image a tool answered with gets none. A kind added breaks nothing: a caller ignores a block it does
 * not expect, as MCP's clients do.
 */
export function contentBreaks(old: ToolSpec, next: ToolSpec): Break[] {
  const kept = new Set(kindsOf(next));
  return kindsOf(old)
    .filter((kind) => !kept.has(kind))
    .map((kind) => ({
      code: 'content-removed' as const,
      tool: old.name,
      path: '/content',
      message: oneLine(`tool \`${old.name}\` no longer declares content of kind \`${kind}\`: a caller reading it gets none`),
    }));
}
