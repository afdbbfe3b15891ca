/**
 * How `/mcp` tells which generation a request belongs to: the SDK's classification of its body, then its
 * headers. Two strategies, one chosen when the endpoint is made (transport.ts):
 *
 * - `sdkRouting`: the classification, run on every request;
 * - `CachedRouting`: the same answers, the classification run only on what it cannot tell without it. A
 *   request plainly of the 2025 generation is routed as such, and a 2026-07-28 call the fast path takes
 *   whose envelope the classification accepted before is routed as it was then (fast-call.ts'
 *   `KnownEnvelopes` says why that is the classification's answer).
 *
 * The classification parses every body with zod as a response, an error and a request in turn: a
 * sizeable share of the main thread's time per call in a CPU profile of bermd answering many callers
 * (docs/decisions.md). `--mcp-fast-path false` routes with `sdkRouting`, so a user who suspects the
 * cache can compare.
 */
import type { FastifyRequest } from 'fastify';
import {
  classifyInboundRequest,
  type InboundClassificationOutcome,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { KnownEnvelopes } from './fast-call.js';

export interface McpRouting {
  /**
   * The SDK's classification of the request (`body` is its parsed JSON, undefined for GET and DELETE);
   * undefined for a request plainly of the 2025 generation, which the classification would call legacy.
   */
  route(request: FastifyRequest, body: unknown): InboundClassificationOutcome | undefined;
}

/** A header's value as the SDK's classification reads it: one string, or absent. */
function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function classify(request: FastifyRequest, body: unknown): InboundClassificationOutcome {
  return classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: header(request, 'mcp-protocol-version'),
    mcpMethodHeader: header(request, 'mcp-method'),
    mcpNameHeader: header(request, 'mcp-name'),
    body,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether the SDK's classification would call the request 2025-era, told without running it: a GET or
 * DELETE, or one JSON-RPC object whose `_meta` claims no protocol version and whose
 * `MCP-Protocol-Version` header, if any, names a 2025-era one. What this does not settle (batches,
 * envelopes, other versions) the classification decides.
 *
 * One difference on the wire: a lone 2025 request the SDK's schemas refuse (an id of 1.5) is refused by
 * the session's transport (-32700) rather than by the classification (-32600); both are 400.
 */
function plainlyLegacy(request: FastifyRequest, body: unknown): boolean {
  if (request.method !== 'POST') return true;
  if (!isObject(body)) return false;
  const version = header(request, 'mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return false;
  const meta = isObject(body.params) ? body.params._meta : undefined;
  return !(isObject(meta) && PROTOCOL_VERSION_META_KEY in meta);
}

/** Every request through the SDK's classification. */
export const sdkRouting: McpRouting = { route: classify };

/** The classification, skipped where its answer is known (see the top of this file). One per endpoint: it remembers envelopes. */
export class CachedRouting implements McpRouting {
  private readonly envelopes = new KnownEnvelopes();

  route(request: FastifyRequest, body: unknown): InboundClassificationOutcome | undefined {
    if (plainlyLegacy(request, body)) return undefined;
    let route = this.envelopes.routeOf(body, request.headers);
    if (route === undefined) {
      route = classify(request, body);
      this.envelopes.learn(route, request.headers);
    }
    return route;
  }
}
