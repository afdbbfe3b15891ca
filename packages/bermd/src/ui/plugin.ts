/**
 * The page at `/` (`@berm/ui`, built into static files) as a fastify plugin: `index.html` and its
 * content-hashed `assets/`, and `/page.json`, the OAuth client the page signs in as (`--oauth-page-client`).
 * The page is a shell that holds no data, so its routes are public (the
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
 * would still run nothing and load nothing from elsewhere. Where the page signs in through an
 * authorization server, connections may also go to that server's origin, and to no other: its
 * metadata and its token endpoint. Going to its authorization endpoint is a navigation of the whole
 * page, which no directive governs; forms still go nowhere.
 */
export function contentSecurityPolicy(signInOrigin?: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    signInOrigin === undefined ? "connect-src 'self'" : `connect-src 'self' ${signInOrigin}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** What the page is told at `/page.json`: the client it signs in as, a public client id (RFC 6749 §2.1), never a secret. */
export interface PageConfig {
  oauth_client_id: string | null;
}

export interface UiOptions {
  /** `--oauth-issuer` and `--oauth-page-client`: the page signs in through that server as that client. */
  signIn?: { issuer: string; clientId: string };
}

/** Asset names carry a hash of their content, so a cached copy can never be stale. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

export const uiPlugin: FastifyPluginAsync<UiOptions> = async (app, options) => {
  if (!existsSync(path.join(uiDir, 'index.html'))) {
    app.log.warn({ dir: uiDir }, 'the web page is not built (npm run build); / is not served');
    return;
  }
  const csp = contentSecurityPolicy(options.signIn === undefined ? undefined : new URL(options.signIn.issuer).origin);
  // Every route this plugin adds is a file of the page, or what it needs to sign in: public.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true };
  });
  const config: PageConfig = { oauth_client_id: options.signIn?.clientId ?? null };
  app.get('/page.json', async (_request, reply) => {
    reply.header('cache-control', 'no-cache');
    reply.header('x-content-type-options', 'nosniff');
    return config;
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
        reply.header('content-security-policy', csp);
        reply.header('cache-control', 'no-cache');
        reply.header('referrer-policy', 'no-referrer');
      } else {
        reply.header('cache-control', IMMUTABLE);
      }
    },
  });
};
