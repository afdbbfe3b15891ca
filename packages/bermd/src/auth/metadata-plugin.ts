/**
 * The routes of the protected resource metadata (resource-metadata.ts), as a fastify plugin that
 * daemon.ts registers when bermd is a resource server. They are public (a client reads them before it
 * has a token); the Host and Origin checks apply to them as to every route.
 */
import type { FastifyPluginAsync } from 'fastify';
import { resourceMetadata, resourceMetadataPaths } from './resource-metadata.js';

export interface ProtectedResourceOptions {
  resource: string;
  issuer: string;
}

/** How long a client may keep the document: it changes only when bermd restarts with other flags. */
const MAX_AGE_S = 3600;

export const protectedResourcePlugin: FastifyPluginAsync<ProtectedResourceOptions> = async (app, { resource, issuer }) => {
  const body = JSON.stringify(resourceMetadata(resource, issuer));
  for (const url of resourceMetadataPaths(resource)) {
    app.get(url, { config: { public: true } }, async (_request, reply) =>
      reply.header('content-type', 'application/json').header('cache-control', `public, max-age=${MAX_AGE_S}`).send(body),
    );
  }
};
