/**
 * The headers an MCP request over Streamable HTTP carries beyond its body, as the MCP SDK's client
 * transport derives them, for `berm mcp`'s relay (transport.ts) and `berm call` (mcp-call.ts) alike.
 */
import { isJSONRPCRequest, META, type JSONRPCMessage } from '../json-rpc.js';

/** What a POST accepts: a JSON answer, or Server-Sent Events. */
export const POST_ACCEPT = 'application/json, text/event-stream';
/** What the GET that opens a 2025 session's stream accepts. */
export const GET_ACCEPT = 'text/event-stream';

/** Which member of a request's params its `Mcp-Name` header repeats, by method (MCP's table). */
const NAMED_BY: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

const BASE64_OPEN = '=?base64?';
const BASE64_CLOSE = '?=';

/** An `Mcp-Name` header's value: as it is when it is plain printable ASCII, else Base64 between MCP's sentinels. */
export function mcpNameHeader(value: string): string {
  const plain =
    value.length > 0 &&
    value === value.trim() &&
    !(value.startsWith(BASE64_OPEN) && value.endsWith(BASE64_CLOSE)) &&
    /^[\t\x20-\x7e]*$/.test(value);
  return plain ? value : `${BASE64_OPEN}${Buffer.from(value, 'utf8').toString('base64')}${BASE64_CLOSE}`;
}

/**
 * The headers a 2026-07-28 request derives from its body: `MCP-Protocol-Version` from the version its
 * `_meta` names, `Mcp-Method`, and `Mcp-Name` for a method that names something. None for a message that
 * names no version there (every 2025 message), so no 2026-07-28 header reaches a session.
 */
export function messageHeaders(message: JSONRPCMessage): Record<string, string> {
  if (!isJSONRPCRequest(message)) return {};
  const params = message.params as Record<string, unknown> | undefined;
  const version = (params?._meta as Record<string, unknown> | undefined)?.[META.protocolVersion];
  if (typeof version !== 'string') return {};
  const headers: Record<string, string> = { 'mcp-protocol-version': version, 'mcp-method': message.method };
  const field = Object.hasOwn(NAMED_BY, message.method) ? NAMED_BY[message.method] : undefined;
  const name = field === undefined ? undefined : params?.[field];
  if (typeof name === 'string') headers['mcp-name'] = mcpNameHeader(name);
  return headers;
}

/** Whether `version` is of the 2026-07-28 generation or later (versions are dates, which order as text). */
export function isStatelessVersion(version: string): boolean {
  return version >= '2026-07-28';
}

/** A `Content-Type`'s media type, lower case, without its parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * What a `WWW-Authenticate` challenge of the Bearer or DPoP scheme says: its `error` and `scope`, read as
 * the SDK reads them (a parameter's quoted value, or its token up to a space or comma).
 */
export function challengeOf(header: string | undefined): { error?: string; scope?: string } {
  if (header === undefined) return {};
  const [scheme, rest] = header.split(' ');
  if (scheme === undefined || !['bearer', 'dpop'].includes(scheme.toLowerCase()) || !rest) return {};
  const field = (name: string): string | undefined => {
    const match = new RegExp(`${name}=(?:"([^"]+)"|([^\\s,]+))`).exec(header);
    return match?.[1] || match?.[2] || undefined;
  };
  return { error: field('error'), scope: field('scope') };
}
