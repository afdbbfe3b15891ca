/**
 * The page at `/` (`@berm/ui`, built into static files) as a fastify plugin: `index.html` and its
 * content-hashed `assets/`. The page is a shell that holds no data, so its routes are public (the
 * app's token check passes them by), since a browser navigating to `/` could not send the token;
 * everything the page shows comes from the control API and `/mcp`, which keep asking for it (see
 * docs/decisions.md).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { uiDir } from '@berm/ui';

/**
 * Scripts, styles, fonts and connections from bermd itself only, images from bermd or `data:`,
 * nothing inline, no plugins, no framing. A manifest's text that got past the page's escaping
 * would still run nothing and load nothing from elsewhere.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Asset names carry a hash of their content, so a cached copy can never be stale. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

export const uiPlugin: FastifyPluginAsync = async (app) => {
  if (!existsSync(path.join(uiDir, 'index.html'))) {
    app.log.warn({ dir: uiDir }, 'the web page is not built (npm run build); / is not served');
    return;
  }
  // Every route this plugin adds is a static file of the page: public.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true };
  });
  await app.register(fastifyStatic, {
    root: uiDir,
    // One route per built file, found once at start: no path from a request ever reaches the filesystem.
    wildcard: false,
    index: 'index.html',
    cacheControl: false,
    setHeaders(reply, file) {
      reply.header('x-content-type-options', 'nosniff');
      if (file.endsWith('.html')) {
        reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
        reply.header('cache-control', 'no-cache');
        reply.header('referrer-policy', 'no-referrer');
      } else {
        reply.header('cache-control', IMMUTABLE);
      }
    },
  });
};
