/**
 * The HTTP app every route of bermd lives in. The app holds what applies to every request, before any
 * plugin's route is reached: the Host and Origin checks, bodies read as bytes, the bearer token (which
 * routes flagged `public` skip), new requests refused and connections let go of once the daemon is
 * closing (closing.ts), and the JSON 404. The rooms serve their routes as encapsulated plugins
 * registered into it (control/, mcp/, ui/), each with its own error handler; a check every request must
 * pass is one more hook here.
 */
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Authentication, type Principal } from '../auth/index.js';
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
    /**
     * What the route asks of the request's principal: the scope it lacks (the request is refused 403
     * `insufficient-scope` naming it), or undefined. Checked once the token names a principal; a route
     * without one asks only for a principal (a valid token where bermd asks for one).
     */
    access?: (principal: Principal, request: FastifyRequest) => string | undefined;
  }
  interface FastifyInstance {
    /** Who requests are made by, for a plugin that refuses a scope itself (`refuseScope`). */
    auth: Authentication;
  }
  interface FastifyRequest {
    /** Who made the request: its token's principal, or `anonymous` where bermd asks for no token. Set before any route runs. */
    principal: Principal;
  }
}

/** A route's `access` for a route that needs one scope. */
export function needs(scope: string): (principal: Principal) => string | undefined {
  return (principal) => (principal.has(scope) ? undefined : scope);
}

export interface AppOptions {
  logger: Logger;
  /** The largest request body any route accepts; a route may set a lower one. */
  bodyLimit: number;
  /** Who requests are made by; every request is `anonymous` when unset. */
  auth?: Authentication;
  /** The names requests may address bermd by and come from; the loopback names alone when unset. */
  hosts?: HostPolicy;
  /** How long a connection may take to send a request head; also how long it may stay idle between requests. */
  headersTimeoutMs?: number;
  /** How long a connection may take to send a whole request, body included (never how long its answer takes). */
  requestTimeoutMs?: number;
}

/**
 * The 403 for a principal without `scope`: the challenge goes on the reply, the error is for the
 * plugin's handler to answer. Its words name the scope and the principal, nothing the principal may not see.
 */
export function refuseScope(request: FastifyRequest, reply: { header(name: string, value: string): unknown }, scope: string): BermdError {
  // The challenge asks for what the principal holds and the scope it lacks: a client that replaces its
  // scopes with the challenge's (MCP 2025-11-25's advice to servers, the SDKs' behaviour) keeps what it had.
  const asked = [...new Set([...request.principal.scopes, scope])].join(' ');
  reply.header('www-authenticate', request.server.auth.challenge({ scope: asked }));
  return new BermdError('insufficient-scope', `${request.principal.name} does not hold the scope ${scope} this request needs`, { scope });
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

  // Who makes the request, before any route: a request whose token names nobody is refused here, with
  // what a client needs to get a token (RFC 9728). A principal without the scope its route asks for is
  // refused 403 naming it, so the client can ask for it (step-up); thrown, so each plugin answers in its
  // own terms, with the challenge already on the reply.
  const auth = options.auth ?? new Authentication();
  app.decorate('auth', auth);
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.public === true) return;
    const found = await auth.authenticate(request.headers.authorization);
    if (!('principal' in found)) {
      const refused = 'refused' in found ? found.refused : undefined;
      if (refused !== undefined) request.log.info({ reason: refused }, 'a token was refused');
      reply.header('www-authenticate', auth.challenge({ refused }));
      throw new BermdError(
        'unauthorized',
        refused === undefined ? 'this bermd requires Authorization: Bearer <token>' : `the bearer token was refused: ${refused}`,
      );
    }
    const { principal } = found;
    request.principal = principal;
    if (auth.required) {
      // Every later line of the request names who made it. Fastify gave the reply its own reference to
      // the request's first logger, and writes "request completed" through it: both are rebound.
      request.log = request.log.child({ principal: principal.name });
      reply.log = request.log;
    }
    const missing = request.routeOptions.config.access?.(principal, request);
    if (missing !== undefined) throw refuseScope(request, reply, missing);
  });

  // What no plugin answers: the control API's JSON errors.
  app.setErrorHandler((error: FastifyError | BermdError, request, reply) => replyWithError(error, request, reply));
  app.setNotFoundHandler((request, reply) => {
    const error = new BermdError('not-found', `no route ${request.method} ${request.url}`);
    return reply.code(404).send(error.toBody());
  });

  return app;
}
