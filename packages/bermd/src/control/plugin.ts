/**
 * The control API (spec §5) as a fastify plugin over a registry: the routes and their schemas, the
 * stream of the deployed set's changes (`GET /events`, events.ts), and the plugin's own error
 * handler, which answers every failure as `{"error": {...}}`. Listening is the caller's business;
 * what every request passes first (the token) is the app's (app/).
 */
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ApiError, badHarnessNameMessage, SCOPE, type ParsedQuery, type ReceiptsPage, type WhoAmI } from '@berm/protocol';
import { apiErrorOf, drainRejectedBody, needs, refuseScope, replyWithError } from '../app/index.js';
import { type DeployPhase, readDeployQuery, receiptView, type Receipt, type ReceiptStore, type Registry } from '../deploy/index.js';
import { BermdError } from '../errors.js';
import type { ControlRequestTrace, Tracing } from '../telemetry/index.js';
import { EventStreams } from './event-stream.js';
import { addChangeStream } from './events.js';
import { addFigureRoutes, type FiguresSource } from './figures.js';
import { whoAmI } from './whoami.js';
import {
  DEPLOY_SCHEMA,
  HARNESS_SCHEMA,
  HISTORY_SCHEMA,
  IMAGE_SCHEMA,
  RECEIPTS_SCHEMA,
  queryError,
  type QueryRoute,
  readRollbackBody,
  ROLLBACK_SCHEMA,
  validatorCompiler,
} from './schemas.js';

export interface ControlOptions {
  registry: Registry;
  /** Each request is a SERVER span when set (tracing on); unset, nothing is traced. */
  tracing?: Tracing;
  /** The largest image a deploy accepts; a larger body gets 413 `image-too-large`. */
  maxImageSize: number;
  /** The most `GET /events` streams open at once; one more gets 503 `event-stream-cap`. `MAX_EVENT_STREAMS` by default. */
  maxEventStreams?: number;
  /** The interval of the `/events` streams' keep-alive comment (app/keep-alive.ts); its default when unset. */
  keepAliveMs?: number;
  /** The live figures of the harnesses' calls (`GET /figures`, `GET /harnesses/{name}/figures`, `GET /figures/events`). */
  figures: FiguresSource;
  /** How often `GET /figures/events` may tell what moved; `FIGURES_INTERVAL_MS` when unset. */
  figuresIntervalMs?: number;
  /** The receipts of external writes (`GET /harnesses/{name}/receipts`); a store that keeps none answers an empty list. */
  receipts?: ReceiptStore;
}

/** How much of a too-large image is read and dropped so its sender gets the 413; past this the connection is closed. */
const DRAIN_LIMIT = 1024 ** 3;

interface NameParams {
  name: string;
}

export const controlPlugin: FastifyPluginAsync<ControlOptions> = async (app, options) => {
  const { registry, maxImageSize, tracing } = options;
  app.setValidatorCompiler(validatorCompiler);
  const traceOf = tracing === undefined ? undefined : traceRequests(app, tracing);
  /** What a deploy made by `request` hands on of its trace: its phases as spans, its lines with the trace's ids. */
  const deployTrace = (request: FastifyRequest): { phase?: DeployPhase; logger?: FastifyBaseLogger } => {
    const traced = traceOf?.(request);
    return traced === undefined ? {} : { phase: traced.phase, logger: request.log };
  };

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return replyWithError(error, request, reply);
    if (error.validation !== undefined) {
      const digest = (request.params as { digest?: string }).digest;
      const failed =
        error.validationContext === 'params' && error.validation[0]?.instancePath === '/digest'
          ? new BermdError('bad-request', `${String(digest)} is not an image digest: sha256: and 64 hex digits, as berm history shows`)
          : error.validationContext === 'params'
            ? new BermdError('bad-name', badHarnessNameMessage((request.params as NameParams).name), {
                name: (request.params as NameParams).name,
              })
            : queryError(error.validation, request.query as ParsedQuery, {
                method: request.method,
                url: request.routeOptions.url,
                querystring: request.routeOptions.schema?.querystring as QueryRoute['querystring'],
              });
      return replyWithError(failed, request, reply);
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const declared = Number(request.headers['content-length']);
      if (!(declared > DRAIN_LIMIT)) drainRejectedBody(request, reply, DRAIN_LIMIT);
      const tooLarge = new BermdError(
        'image-too-large',
        `the image is larger than this bermd accepts (${maxImageSize} bytes; see --max-image-size)`,
        {
          limit: maxImageSize,
        },
      );
      return replyWithError(tooLarge, request, reply);
    }
    return replyWithError(apiErrorOf(error), request, reply);
  });

  app.put<{ Params: NameParams; Querystring: ParsedQuery }>(
    '/harnesses/:name',
    { schema: DEPLOY_SCHEMA, bodyLimit: maxImageSize, config: { access: needs(SCOPE.deploy) } },
    async (request, reply) => {
      const body = request.body;
      const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
      // Limits and grants travel as query parameters beside force and dry-run, so a deploy stays one request whose body is the image.
      const { force, dryRun, bindings, source } = readDeployQuery(request.query);
      if (force && !request.principal.has(SCOPE.force)) throw refuseScope(request, reply, SCOPE.force);
      const by = request.principal.name;
      const { replaced, ...result } = await registry.deploy(request.params.name, bytes, {
        force,
        dryRun,
        bindings,
        by,
        source,
        ...deployTrace(request),
      });
      return reply.code(replaced ? 200 : 201).send(result);
    },
  );

  const read = { access: needs(SCOPE.read) };
  app.get('/harnesses', { config: read }, async () => registry.list());

  app.get<{ Params: NameParams }>('/harnesses/:name', { schema: HARNESS_SCHEMA, config: read }, async (request) =>
    registry.get(request.params.name),
  );

  app.get<{ Params: NameParams }>('/harnesses/:name/image', { schema: HARNESS_SCHEMA, config: read }, async (request, reply) => {
    const bytes = await registry.image(request.params.name);
    return reply.type('application/wasm').send(bytes);
  });

  app.get<{ Params: NameParams; Querystring: { cursor?: string; limit?: number } }>(
    '/harnesses/:name/history',
    { schema: HISTORY_SCHEMA, config: read },
    async (request) => registry.history(request.params.name, request.query),
  );

  // Receipts outlive an undeploy (they are kept by time), so a name need not be deployed to have some.
  app.get<{ Params: NameParams; Querystring: { key?: string; bodies: boolean; limit: number } }>(
    '/harnesses/:name/receipts',
    { schema: RECEIPTS_SCHEMA, config: read },
    async (request): Promise<ReceiptsPage> => {
      const { name } = request.params;
      const { key, bodies, limit } = request.query;
      let found: Receipt[];
      try {
        found = (await options.receipts?.list(name, { key, limit })) ?? [];
      } catch (e) {
        request.log.error({ err: e, harness: name }, 'could not read receipts');
        throw new BermdError(
          'store-unavailable',
          `the receipts of ${name} could not be read: the store did not answer; try again once it does`,
        );
      }
      return { name, receipts: found.map((r) => receiptView(r, bodies)) };
    },
  );

  app.get<{ Params: NameParams }>('/harnesses/:name/images', { schema: HARNESS_SCHEMA, config: read }, async (request) =>
    registry.retained(request.params.name),
  );

  app.get<{ Params: NameParams & { digest: string } }>(
    '/harnesses/:name/images/:digest',
    { schema: IMAGE_SCHEMA, config: read },
    async (request, reply) => {
      const bytes = await registry.retainedImage(request.params.name, request.params.digest);
      // An image is named by its digest: what answers to it never changes.
      return reply.type('application/wasm').header('cache-control', 'private, max-age=31536000, immutable').send(bytes);
    },
  );

  app.post<{ Params: NameParams; Querystring: ParsedQuery }>(
    '/harnesses/:name/rollback',
    { schema: ROLLBACK_SCHEMA, config: { access: needs(SCOPE.deploy) } },
    async (request, reply) => {
      const { to, steps } = readRollbackBody(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
      const { force, dryRun } = readDeployQuery(request.query);
      if (force && !request.principal.has(SCOPE.force)) throw refuseScope(request, reply, SCOPE.force);
      const { replaced, ...result } = await registry.rollback(request.params.name, {
        to,
        steps,
        force,
        dryRun,
        by: request.principal.name,
        ...deployTrace(request),
      });
      return reply.code(replaced ? 200 : 201).send(result);
    },
  );

  app.get('/undeployed', { config: read }, async () => ({ harnesses: await registry.undeployed() }));

  app.delete<{ Params: NameParams }>(
    '/harnesses/:name',
    { schema: HARNESS_SCHEMA, config: { access: needs(SCOPE.deploy) } },
    async (request, reply) => {
      await registry.undeploy(request.params.name, { by: request.principal.name });
      return reply.code(204).send();
    },
  );

  // Any principal may ask who it is: a client says so, and what it may do, before it tries.
  app.get('/whoami', async (request): Promise<WhoAmI> => whoAmI(request.principal));

  const streams = new EventStreams(app, options.maxEventStreams, options.keepAliveMs);
  addChangeStream(app, registry, streams);
  addFigureRoutes(app, options.figures, streams, options.figuresIntervalMs);
};

/**
 * Each control request as a SERVER span named by its route's template (`PUT /harnesses/:name`). Its log
 * lines carry the span's ids, and a deploy it makes runs its phases as the span's children (handed on by
 * the handler: bermd keeps no current span across `await`s, tracing.ts says why). Answers the span of a request.
 */
function traceRequests(app: FastifyInstance, tracing: Tracing): (request: FastifyRequest) => ControlRequestTrace | undefined {
  const spans = new WeakMap<FastifyRequest, ControlRequestTrace>();
  app.addHook('onRequest', (request, reply, done) => {
    const traced = tracing.httpRequest(request.method, request.routeOptions.url ?? request.url.split('?')[0]!, request.headers);
    spans.set(request, traced);
    request.log = request.log.child(traced.logFields);
    reply.log = request.log;
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    spans.get(request)?.end(reply.statusCode);
    done();
  });
  return (request) => spans.get(request);
}
