/**
 * The HTTP app every route of bermd lives in. The app holds what applies to every request, before any
 * plugin's route is reached: bodies read as bytes, the bearer token (which routes flagged `public`
 * skip), connections let go of once the daemon is closing (closing.ts), and the JSON 404. The rooms
 * serve their routes as encapsulated plugins registered into it (control/, mcp/, ui/), each with its
 * own error handler; a check every request must pass (a Host or Origin check, say) is one more hook
 * here.
 */
import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { BermdError } from '../errors.js';
import { closeConnectionsOnClose } from './closing.js';
import { replyWithError } from './errors.js';

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
}

export function buildApp(options: AppOptions): FastifyInstance {
  const app = Fastify({ loggerInstance: options.logger as FastifyBaseLogger, bodyLimit: options.bodyLimit });

  // Every body is taken as raw bytes whatever type the client declared: a deploy's is the image itself,
  // so `curl --data-binary @image.wasm` (form-encoded by default) deploys as well, and /mcp reads its
  // JSON-RPC itself.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/wasm', 'application/octet-stream'], { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // A stopping daemon waits on no connection a client holds open (closing.ts).
  closeConnectionsOnClose(app);

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
