/**
 * `GET /healthz`, `GET /readyz` and `GET /metrics` as a fastify plugin. The probes are for load balancers
 * and orchestrators, which hold no token: they are `public` and say nothing of the harnesses, only whether
 * the process serves and whether it can serve calls now. `/metrics` needs `berm:read` where principals
 * are configured, as the control API's reads do; on the metrics listener (`--metrics-listen`, for a
 * scraper) it is the only route, and public, that listener being the operator's choice to open it.
 */
import type { FastifyPluginAsync } from 'fastify';
import { SCOPE } from '@berm/protocol';
import { needs } from '../app/index.js';
import { BermdError } from '../errors.js';
import type { Telemetry } from './telemetry.js';

/** What Prometheus' text format is served as (the exposition format's version 0.0.4). */
const PROMETHEUS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface TelemetryRoutesOptions {
  /** The meter; undefined when metrics are off (`OTEL_SDK_DISABLED=true`). */
  telemetry?: Telemetry;
  /** Serve `/healthz` and `/readyz` (the main listener); the metrics listener serves `/metrics` alone. */
  probes: boolean;
  /** `/metrics` without a token (the metrics listener). */
  publicMetrics: boolean;
  /** Why bermd cannot serve calls now, or undefined when it can. Cheap: read on every probe. */
  unready?: () => string | undefined;
}

export const telemetryRoutes: FastifyPluginAsync<TelemetryRoutesOptions> = async (app, options) => {
  const { telemetry } = options;
  if (options.probes) {
    app.get('/healthz', { config: { public: true } }, async (_request, reply) =>
      reply.header('cache-control', 'no-store').send({ status: 'ok' }),
    );
    app.get('/readyz', { config: { public: true } }, async (_request, reply) => {
      const reason = options.unready?.();
      reply.header('cache-control', 'no-store');
      return reason === undefined ? reply.send({ status: 'ready' }) : reply.code(503).send({ status: 'unready', reason });
    });
  }
  app.get('/metrics', { config: options.publicMetrics ? { public: true } : { access: needs(SCOPE.read) } }, async (_request, reply) => {
    if (telemetry === undefined)
      throw new BermdError('not-found', 'metrics are off in this bermd (OTEL_SDK_DISABLED=true); unset it and restart bermd to serve them');
    const text = await telemetry.prometheusText();
    return reply.header('cache-control', 'no-store').type(PROMETHEUS_TYPE).send(text);
  });
};
