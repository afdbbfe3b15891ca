/**
 * The fast path of `tools/list`: a POST carrying one `tools/list` request, on a live 2025-era session or
 * as a 2026-07-28 request, answered from the catalog's serialised list (`ToolCatalog.toolsJson`) rather
 * than through the SDK.
 *
 * Why: with a thousand harnesses the list is a megabyte, and through the SDK each request built the
 * answer's objects, serialised them, encoded the text into a web `Response` and decoded it back (the
 * figures are in docs/decisions.md). The list changes only with the deployed set, so its text is made
 * once per change and generation.
 *
 * What it keeps: the SDK's answer on the wire, byte for byte (test/mcp-wire.test.ts compares them), and
 * its checks: a request it does not read whole (a cursor, a task, `_meta` it does not know, headers that
 * disagree with the body) takes the SDK's path.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { type InboundClassificationOutcome, SERVER_INFO_META_KEY, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { Caller } from '../runtime/index.js';
import {
  MODERN_REVISION,
  MODERN_META,
  isIdLike,
  isJsonContentType,
  isObject,
  isPlainMeta,
  type RequestId,
  SSE_HEADERS,
} from './fast-call.js';
import { CACHE_HINTS, type McpCore, serverInfo } from './server.js';

/** The members the SDK's schema of a request allows (it is strict): anything more is its to refuse. */
const REQUEST_MEMBERS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);

/** The id of the one `tools/list` in `body` with no params but `_meta`; undefined when it is anything else. */
function listOf(body: unknown): { id: RequestId; meta: unknown } | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/list' || !isIdLike(body.id)) return undefined;
  for (const key in body) if (!REQUEST_MEMBERS.has(key)) return undefined;
  const { params } = body;
  if (params === undefined) return { id: body.id, meta: undefined };
  if (!isObject(params)) return undefined;
  for (const key in params) if (key !== '_meta') return undefined;
  return { id: body.id, meta: params._meta };
}

/** The id of a `tools/list` the fast path may answer on a 2025 session: one the transport would accept. */
export function fastListOf(body: unknown, headers: IncomingHttpHeaders): RequestId | undefined {
  const list = listOf(body);
  if (list === undefined || !isPlainMeta(list.meta)) return undefined;
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(headers['content-type'])) return undefined;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  return list.id;
}

/** The id of a request the SDK classified as a 2026-07-28 `tools/list` the fast path may answer, its headers agreeing with it. */
export function modernFastListOf(route: InboundClassificationOutcome, headers: IncomingHttpHeaders): RequestId | undefined {
  if (route.kind !== 'modern' || route.messageKind !== 'request' || route.classification.revision !== MODERN_REVISION) return undefined;
  const list = listOf(route.message);
  if (list === undefined) return undefined;
  const meta = list.meta;
  if (!isObject(meta)) return undefined;
  for (const key in meta) if (!MODERN_META.has(key)) return undefined;
  if (meta.progressToken !== undefined && !isIdLike(meta.progressToken)) return undefined;
  if (!isJsonContentType(headers['content-type'])) return undefined;
  if (headers['mcp-protocol-version'] !== MODERN_REVISION || headers['mcp-method'] !== 'tools/list') return undefined;
  return list.id;
}

/**
 * Writes the kept list between the answer's text before and after it, with the answer's length: one write
 * of three buffers (corked), none of them a copy of the list.
 */
function send(res: ServerResponse, headers: Record<string, string>, before: string, tools: Buffer, after: string): void {
  if (res.destroyed) return;
  const head = Buffer.from(before);
  const tail = Buffer.from(after);
  headers['content-length'] = String(head.length + tools.length + tail.length);
  res.writeHead(200, headers);
  res.cork();
  res.write(head);
  res.write(tools);
  res.end(tail);
  res.uncork();
}

/** Answers a 2025 session's `tools/list` as its transport does: one SSE `message` event. */
export function answerFastList(
  core: McpCore,
  session: string | undefined,
  id: RequestId,
  res: ServerResponse,
  caller: Caller,
): Promise<void> {
  const headers: Record<string, string> = { ...SSE_HEADERS };
  if (session !== undefined) headers['mcp-session-id'] = session;
  const tools = core.catalog.toolsJson('legacy', caller);
  core.logger.debug({ session, rpc_id: id, principal: caller.name, via: 'fast-path' }, 'tools/list answered');
  send(res, headers, 'event: message\ndata: {"result":{"tools":', tools, `},"jsonrpc":"2.0","id":${JSON.stringify(id)}}\n\n`);
  return Promise.resolve();
}

/** Answers a 2026-07-28 `tools/list` as the SDK's handler does: one JSON body, with the caching hints and `serverInfo`. */
export function answerModernFastList(core: McpCore, id: RequestId, res: ServerResponse, caller: Caller): Promise<void> {
  const hints = CACHE_HINTS['tools/list']!;
  const tail = JSON.stringify({ resultType: 'complete', ...hints, _meta: { [SERVER_INFO_META_KEY]: serverInfo(core) } });
  const tools = core.catalog.toolsJson('modern', caller);
  core.logger.debug({ rpc_id: id, principal: caller.name, via: 'fast-path' }, 'tools/list answered');
  send(
    res,
    { 'content-type': 'application/json' },
    '{"result":{"tools":',
    tools,
    `,${tail.slice(1)},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`,
  );
  return Promise.resolve();
}
