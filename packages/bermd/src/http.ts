import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { parseBindingQuery } from './bindings.js';
import { BermdError } from './errors.js';
import { registerEventRoutes } from './events.js';
import type { Registry } from './registry.js';

export interface HttpOptions {
  logger: Logger;
  /** The largest request body (an image) accepted; larger ones get 413 `image-too-large`. */
  maxImageSize: number;
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  token?: string;
}

/** How much of a too-large body is read and dropped so its sender gets the 413; past this the connection is closed. */
const DRAIN_LIMIT = 1024 ** 3;

interface NameParams { name: string }
interface DeployQuery { force?: string; [binding: string]: string | string[] | undefined }

/** Builds the control API (spec §5) over a registry. Listening is the caller's business. */
export function buildHttpApp(registry: Registry, options: HttpOptions): FastifyInstance {
  const app = Fastify({ loggerInstance: options.logger as FastifyBaseLogger, bodyLimit: options.maxImageSize });

  // The body of a deploy is the image itself. It is taken as raw bytes whatever type the client
  // declared, so `curl --data-binary @image.wasm` (form-encoded by default) deploys as well.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/wasm', 'application/octet-stream'], { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Answers sent while closing end their connection, so a client holding it open for keep-alive
  // does not keep a stopping daemon waiting.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  if (options.token !== undefined) {
    const expected = Buffer.from(options.token);
    app.addHook('onRequest', async (request, reply) => {
      if (request.routeOptions.config?.public === true) return;
      // An auth scheme is case-insensitive and followed by one or more spaces (RFC 9110 §11.1, RFC 6750 §2.1).
      const credentials = /^bearer +(.*)$/is.exec(request.headers.authorization ?? '');
      const given = Buffer.from(credentials?.[1] ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        const error = new BermdError('unauthorized', 'this bermd requires Authorization: Bearer <token>');
        return reply.code(401).header('www-authenticate', 'Bearer').send(error.toBody());
      }
    });
  }

  app.setErrorHandler((error: FastifyError | BermdError, request, reply) => {
    if (error instanceof BermdError) {
      if (error.status >= 500) request.log.error({ err: error }, error.message);
      return reply.code(error.status).send(error.toBody());
    }
    const translated = translateFrameworkError(error, options.maxImageSize);
    const declared = Number(request.headers['content-length']);
    if (translated.code === 'image-too-large' && !request.raw.complete && !(declared > DRAIN_LIMIT)) {
      // Fastify closes the connection here, but a client still sending its image then sees a broken
      // pipe, never the 413. The rest of the body is read and dropped instead (up to a bound), so
      // the answer arrives.
      reply.removeHeader('connection');
      let drained = 0;
      request.raw.on('data', (chunk: Buffer) => {
        drained += chunk.length;
        if (drained > DRAIN_LIMIT) request.raw.destroy();
      });
      request.raw.resume();
    }
    if (translated.status >= 500) request.log.error({ err: error }, 'request failed');
    return reply.code(translated.status).send(translated.toBody());
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new BermdError('not-found', `no route ${request.method} ${request.url}`);
    return reply.code(404).send(error.toBody());
  });

  app.put<{ Params: NameParams; Querystring: DeployQuery }>('/harnesses/:name', async (request, reply) => {
    const body = request.body;
    const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
    const force = parseFlag(one(request.query.force, 'force'), 'force');
    const dryRun = parseFlag(one(request.query['dry-run'], 'dry-run'), 'dry-run');
    // Limits and grants travel as query parameters beside force, so a deploy stays one request whose body is the image.
    const bindings = parseBindingQuery(request.query, ['force', 'dry-run']);
    const { replaced, ...result } = await registry.deploy(request.params.name, bytes, { force, bindings, dryRun });
    return reply.code(replaced ? 200 : 201).send(result);
  });

  app.get('/harnesses', async () => registry.list());

  app.get<{ Params: NameParams }>('/harnesses/:name', async (request) => registry.get(request.params.name));

  app.get<{ Params: NameParams }>('/harnesses/:name/image', async (request, reply) => {
    const bytes = await registry.image(request.params.name);
    return reply.type('application/wasm').send(bytes);
  });

  app.delete<{ Params: NameParams }>('/harnesses/:name', async (request, reply) => {
    await registry.undeploy(request.params.name);
    return reply.code(204).send();
  });

  registerEventRoutes(app, { registry });

  return app;
}

function one(value: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(value)) throw new BermdError('bad-request', `query parameter ${name} is given ${value.length} times; give it once`);
  return value;
}

function parseFlag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false' || value === '0') return false;
  if (value === '' || value === 'true' || value === '1') return true;
  throw new BermdError('bad-request', `query parameter ${name}=${value}: expected true or false`);
}

function translateFrameworkError(error: FastifyError, maxImageSize: number): BermdError {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new BermdError('image-too-large', `the image is larger than this bermd accepts (${maxImageSize} bytes; see --max-image-size)`, {
        limit: maxImageSize,
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new BermdError('unsupported-media-type', error.message);
    default:
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return new BermdError('bad-request', error.message);
      }
      return new BermdError('internal', 'bermd failed to answer this request; its log says why');
  }
}
