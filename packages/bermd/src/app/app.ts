/**
 * The HTTP app every route of bermd lives in. The app holds what applies to every request, before any
 * plugin's route is reached: the Host and Origin checks, bodies read as bytes, the bearer token (which
 * routes flagged `public` skip), new requests refused and connections let go of once the daemon is
 * closing (closing.ts), and the JSON 404. The rooms serve their routes as encapsulated plugins
 * registered into it (control/, mcp/, ui/), each with its own error handler; a check every request must
 * pass is one more hook here.
 */
import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { BermdError } from '../errors.js';
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from '../limits.js';
import { closeConnectionsOnClose } from './closing.js';
import { replyWithError } from './errors.js';
import { HostPolicy } from './hosts.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A route that carries no data, served without the token: the page's static files (ui/), which a
     * browser navigating to `/` fetches before the page can ask for the token. Set by the plugin that
     * adds the route, read by the token check below, and nowhere else.
     */
    public?: boolean;
  }
}

export interface AppOptions {
  logger: Logger;
  /** The largest request body any route accepts; a route may set a lower one. */
  bodyLimit: number;
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  token?: string;
  /** The names requests may address bermd by and come from; the loopback names alone when unset. */
  hosts?: HostPolicy;
  /** How long a connection may take to send a request head; also how long it may stay idle between requests. */
  headersTimeoutMs?: number;
  /** How long a connection may take to send a whole request, body included (never how long its answer takes). */
  requestTimeoutMs?: number;
}

/** How often the HTTP server looks for connections past their time: often enough to cut them near it. */
function checkingInterval(timeoutMs: number): number {
  return Math.min(30_000, Math.max(100, Math.floor(timeoutMs / 10)));
}

export function buildApp(options: AppOptions): FastifyInstance {
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: options.bodyLimit,
    // Node's HTTP server cuts a connection (408) whose request head, or whole request, is not in within
    // its time. Fastify leaves the request timeout off unless given; the head's is Node's option, and Node
    // looks for late connections every 30 s unless told to look more often.
    requestTimeout,
    keepAliveTimeout: headersTimeout,
    // A request that still comes while the daemon closes is answered here, in bermd's terms (below).
    return503OnClosing: false,
    http: { headersTimeout, connectionsCheckingInterval: checkingInterval(Math.min(headersTimeout, requestTimeout)) },
  });

  // Once the daemon is closing, a new request is refused (503 shutting-down), and a stopping daemon
  // waits on no connection a client holds open (closing.ts).
  const closing = closeConnectionsOnClose(app);

  // First of all, for every route (a plugin's, the 404, whatever is served later): a request addressed to
  // a name that is not this daemon's, or sent by a web page from elsewhere, is refused before anything
  // reads it (hosts.ts says why). Thrown rather than answered, so each plugin's error handler answers in
  // its own terms (JSON-RPC on /mcp).
  const hosts = options.hosts ?? new HostPolicy();
  app.addHook('onRequest', async (request) => {
    const refusal = hosts.refusal(request.headers.host, request.headers.origin);
    if (refusal !== undefined) {
      request.log.info({ host: request.headers.host, origin: request.headers.origin, code: refusal.code }, 'request refused');
      throw refusal;
    }
    if (closing()) throw new BermdError('shutting-down', 'bermd is shutting down');
  });

  // Every body is taken as raw bytes whatever type the client declared: a deploy's is the image itself,
  // so `curl --data-binary @image.wasm` (form-encoded by default) deploys as well, and /mcp reads its
  // JSON-RPC itself.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/wasm', 'application/octet-stream'], { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  if (options.token !== undefined) {
    const expected = Buffer.from(options.token);
    app.addHook('onRequest', async (request, reply) => {
      if (request.routeOptions.config.public === true) return;
      // An auth scheme is case-insensitive and followed by one or more spaces (RFC 9110 §11.1, RFC 6750 §2.1).
      const credentials = /^bearer +(.*)$/is.exec(request.headers.authorization ?? '');
      const given = Buffer.from(credentials?.[1] ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        const error = new BermdError('unauthorized', 'this bermd requires Authorization: Bearer <token>');
        return reply.code(401).header('www-authenticate', 'Bearer').send(error.toBody());
      }
    });
  }

  // What no plugin answers: the control API's JSON errors.
  app.setErrorHandler((error: FastifyError | BermdError, request, reply) => replyWithError(error, request, reply));
  app.setNotFoundHandler((request, reply) => {
    const error = new BermdError('not-found', `no route ${request.method} ${request.url}`);
    return reply.code(404).send(error.toBody());
  });

  return app;
}
