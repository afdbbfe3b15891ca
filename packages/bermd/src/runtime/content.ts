/**
 * The content blocks a result envelope may carry beside its value (`{"ok": v, "content": [...]}`), in
 * MCP's shapes, checked before anything is answered: each block well formed and of a kind its tool
 * declares (`ToolSpec.content`). Checked by hand rather than with the SDK's schemas, which the worker
 * threads do not load; the shapes are MCP's `ContentBlock`.
 */
import { isPlainObject } from './guest-memory.js';

/** Standard Base64 with its padding, as MCP's `data` and `blob` members are written. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The members every block may carry beside its own. */
const COMMON = ['type', 'annotations', '_meta'];

const OWN: Readonly<Record<string, readonly string[]>> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource_link: ['uri', 'name', 'title', 'description', 'mimeType', 'size', 'icons'],
  resource: ['resource'],
};

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function unknownMember(block: Record<string, unknown>, allowed: readonly string[]): string | undefined {
  return Object.keys(block).find((key) => !COMMON.includes(key) && !allowed.includes(key));
}

/** Why an embedded resource (`{"uri", "mimeType"?, "text" | "blob"}`) is malformed; undefined when it is not. */
function resourceProblem(resource: unknown): string | undefined {
  if (!isPlainObject(resource)) return 'its "resource" is not an object {"uri", "mimeType"?, "text" | "blob"}';
  if (!isString(resource.uri) || resource.uri === '') return 'its resource has no "uri" string';
  if (resource.mimeType !== undefined && !isString(resource.mimeType)) return 'its resource\'s "mimeType" is not a string';
  const text = resource.text !== undefined;
  const blob = resource.blob !== undefined;
  if (text === blob) return 'its resource must carry exactly one of "text" and "blob"';
  if (text && !isString(resource.text)) return 'its resource\'s "text" is not a string';
  if (blob && !(isString(resource.blob) && BASE64.test(resource.blob))) return 'its resource\'s "blob" is not Base64';
  const extra = Object.keys(resource).find((k) => !['uri', 'mimeType', 'text', 'blob', '_meta'].includes(k));
  return extra === undefined ? undefined : `its resource has a member "${extra}" MCP does not define`;
}

/** Why one block is malformed (not its kind's check). */
function blockProblem(block: Record<string, unknown>, type: string): string | undefined {
  const extra = unknownMember(block, OWN[type]!);
  if (extra !== undefined) return `it has a member "${extra}" a ${type} block does not`;
  switch (type) {
    case 'text':
      return isString(block.text) ? undefined : 'its "text" is not a string';
    case 'image':
    case 'audio':
      if (!isString(block.data) || !BASE64.test(block.data)) return 'its "data" is not Base64';
      return isString(block.mimeType) && block.mimeType !== '' ? undefined : 'it has no "mimeType" string';
    case 'resource_link':
      if (!isString(block.uri) || block.uri === '') return 'it has no "uri" string';
      return isString(block.name) ? undefined : 'it has no "name" string';
    default:
      return resourceProblem(block.resource);
  }
}

/**
 * Why `content` is not what a tool declaring `kinds` may answer (an array of MCP content blocks of those
 * kinds), naming the first block at fault; undefined when it is.
 */
export function contentProblem(content: unknown, kinds: readonly string[] | undefined): string | undefined {
  if (kinds === undefined || kinds.length === 0)
    return 'its envelope carries "content", which the tool does not declare (the manifest\'s "content" member lists the kinds it may answer)';
  if (!Array.isArray(content)) return 'its envelope\'s "content" is not an array of content blocks';
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i];
    if (!isPlainObject(block) || !isString(block.type)) return `content block ${i} is not an object with a "type"`;
    const { type } = block;
    if (!Object.hasOwn(OWN, type)) return `content block ${i} has type "${type}", which is not a kind of MCP content block`;
    if (!kinds.includes(type))
      return `content block ${i} is of kind "${type}", which the tool does not declare (it declares ${kinds.join(', ')})`;
    const problem = blockProblem(block, type);
    if (problem !== undefined) return `content block ${i} (${type}) is malformed: ${problem}`;
  }
  return undefined;
}
