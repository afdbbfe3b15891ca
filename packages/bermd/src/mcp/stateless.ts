/**
 * The 2026-07-28 generation of `/mcp`: stateless, through the SDK's `createMcpHandler`. Each request
 * carries its protocol version and client capabilities in `_meta`, and is answered by a server built
 * for it alone (`buildStatelessMcpServer`), so nothing a request depends on lives in this process:
 * bermd processes sharing one deployed set answer it alike, and need no affinity behind a balancer.
 * The SDK answers `server/discover`, the header and envelope checks, the caching hints and
 * `subscriptions/listen`, whose streams hear of every deploy and undeploy (`listsChanged`) of a harness
 * their principal may call (listen-filter.ts). Each request reaches its server with its principal as the
 * SDK's `authInfo` (access.ts).
 *
 * A listen stream is held by the process that received it, and hears of the changes that process's
 * deployed set sees; `bus` is where several processes would share them instead.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, type McpHttpHandler, type ServerEventBus } from '@modelcontextprotocol/server';
import { SSE_KEEP_ALIVE_MS } from '../app/index.js';
import type { Caller } from '../runtime/index.js';
import type { McpRequestTrace } from '../telemetry/index.js';
import { callerOf, tracedAuthInfoOf } from './access.js';
import { changeEvent, HARNESSES_META_KEY, ListenFilter } from './listen-filter.js';
import { resolvePath, resourceUris } from './surface.js';
import { buildStatelessMcpServer, type McpCore } from './server.js';
import { numberDefault } from '../limits.js';

/** The most listen streams open at once, one more being refused (the default of `--max-listens`, the SDK's own). */
export const MAX_LISTENS = numberDefault('max-listens');

export interface StatelessOptions {
  /** Where list changes travel to `subscriptions/listen` streams; the SDK's in-process bus by default. */
  bus?: ServerEventBus;
  /** The most listen streams open at once; MAX_LISTENS by default. */
  maxListens?: number;
}

/** The request headers the SDK's handler reads (the MCP ones, and what the body is). */
function forwardedHeaders(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && (name === 'content-type' || name === 'accept' || name.startsWith('mcp-'))) headers.set(name, value);
  }
  return headers;
}

export class StatelessMcp {
  private readonly handler: McpHttpHandler;
  private readonly core: McpCore;
  /** Listen streams answering now. */
  private listening = 0;

  constructor(core: McpCore, options: StatelessOptions = {}) {
    this.core = core;
    this.handler = createMcpHandler(
      (ctx) => {
        // Every request `answer` hands the handler carries its principal; a server for nobody would show everything.
        if (callerOf(ctx.authInfo) === undefined) throw new Error('a 2026-07-28 request reached the MCP handler without its principal');
        return buildStatelessMcpServer(core);
      },
      {
        // 2025-era requests never reach this handler: the plugin routes them to their sessions.
        legacy: 'reject',
        bus: options.bus,
        // Each listen holds a connection and a place on the bus for as long as its client wants.
        maxSubscriptions: options.maxListens ?? MAX_LISTENS,
        keepAliveMs: core.keepAliveMs ?? SSE_KEEP_ALIVE_MS,
        onerror: (e) => core.logger.debug({ err: e }, 'mcp 2026-07-28 request refused or failed'),
      },
    );
  }

  /**
   * Answers one 2026-07-28 request (or one the SDK's checks refuse) on `res`. The body is the one
   * fastify read and parsed, given to the handler as such, and the answer is written with one `end`
   * when it is JSON: measured with a prototype of this route, the SDK's Node adapter (`toNodeHandler`),
   * copying the request into a web `Request` and streaming every answer back, cost 10 to 25 % more per
   * request than this. `caller` is the request's principal: what it is answered is what it may see.
   */
  async answer(request: IncomingMessage, body: unknown, res: ServerResponse, caller: Caller, trace?: McpRequestTrace): Promise<void> {
    // The client going away is the cancellation of its request (and the end of its listen stream).
    const gone = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) gone.abort();
    };
    res.once('close', onClose);
    try {
      const web = new Request(`http://bermd${request.url ?? '/'}`, {
        method: request.method,
        headers: forwardedHeaders(request),
        signal: gone.signal,
      });
      const response = await this.handler.fetch(web, { parsedBody: body, authInfo: tracedAuthInfoOf(caller, trace) });
      if (isListen(body) && response.ok) {
        this.listening++;
        try {
          await send(response, res, new ListenFilter(caller));
        } finally {
          this.listening--;
        }
      } else await send(response, res, isListen(body) ? new ListenFilter(caller) : undefined);
    } finally {
      res.off('close', onClose);
    }
  }

  /** Listen streams open now. */
  get listens(): number {
    return this.listening;
  }

  /**
   * Deploy and undeploy change both lists of the `harnesses` they touched: every open listen stream that
   * asked is told, when its principal may call one of them.
   */
  listsChanged(harnesses: ReadonlySet<string>): void {
    this.handler.bus.publish(changeEvent('tools_list_changed', harnesses));
    this.handler.bus.publish(changeEvent('resources_list_changed', harnesses));
    this.handler.bus.publish(changeEvent('prompts_list_changed', harnesses));
  }

  /** `harness`'s resource at `path` changed: the listen streams that named it (in either URI form) are told. */
  resourceUpdated(harness: string, path: string): void {
    const surface = this.core.catalog.surface(harness);
    if (surface === undefined || resolvePath(surface, path) === undefined) return;
    for (const uri of resourceUris(harness, path)) {
      this.handler.bus.publish({ kind: 'resource_updated', uri, params: { _meta: { [HARNESSES_META_KEY]: [harness] } } });
    }
  }

  /** Ends the listen streams and the requests under way. */
  async close(): Promise<void> {
    await this.handler.close();
    this.core.logger.debug('mcp 2026-07-28 handler closed');
  }
}

function isListen(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'subscriptions/listen';
}

/** Writes `response` on `res`; a stream's chunks through `filter` when there is one. */
async function send(response: Response, res: ServerResponse, filter?: ListenFilter): Promise<void> {
  if (res.destroyed) {
    await response.body?.cancel();
    return;
  }
  const headers = Object.fromEntries(response.headers);
  if (response.body === null) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!headers['content-type']?.startsWith('text/event-stream')) {
    const text = await response.text();
    res.writeHead(response.status, headers).end(text);
    return;
  }
  res.writeHead(response.status, headers).flushHeaders();
  const reader = response.body.getReader();
  const stop = (): void => void reader.cancel().catch(() => {});
  res.once('close', stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (filter === undefined) res.write(value);
      else {
        const text = filter.pass(value);
        if (text !== '') res.write(text);
      }
    }
  } finally {
    res.off('close', stop);
    res.end();
  }
}
