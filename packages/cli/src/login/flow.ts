/**
 * The authorization code flow of a native app (RFC 8252): berm listens on an ephemeral loopback port,
 * the user opens the authorization URL (PKCE with S256, RFC 7636; `resource`, RFC 8707; a fresh
 * `state`), and the authorization server sends the browser back to `http://127.0.0.1:PORT/callback`,
 * where berm checks the state and exchanges the code (the SDK's functions build both requests, and check
 * the response's `iss` where the server says it sends one, RFC 9207).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exchangeAuthorization, type OAuthTokens, startAuthorization } from '@modelcontextprotocol/client';
import { CliError } from '../failure.js';
import { asLoginError, type Discovered } from './discover.js';
import type { RememberedClient } from './store.js';

/** How long berm waits for the browser to come back: long enough to type a password and approve, short enough not to hang a forgotten terminal. */
export const CALLBACK_WAIT_MS = 10 * 60_000;

export interface AuthorizeOptions {
  found: Discovered;
  client: RememberedClient;
  /** Space-separated; none: the server's default. */
  scope?: string;
  /** Tells the user the URL to open (and opens it, when asked). */
  announce(url: URL): void | Promise<void>;
  waitMs?: number;
}

interface Callback {
  params: URLSearchParams;
  answer(status: number, text: string): void;
}

/** Runs the flow to its end: the token set, or a `CliError` saying why there is none. */
export async function authorize(options: AuthorizeOptions): Promise<OAuthTokens> {
  const { found, client } = options;
  const listener = await listen();
  try {
    const redirectUrl = `http://127.0.0.1:${listener.port}/callback`;
    const state = randomBytes(32).toString('base64url');
    const { authorizationUrl, codeVerifier } = await startAuthorization(found.issuer, {
      metadata: found.metadata,
      clientInformation: client,
      redirectUrl,
      scope: options.scope,
      state,
      resource: found.resource,
    }).catch((e: unknown) => {
      throw asLoginError(e, `the authorization server ${found.issuer}`);
    });
    await options.announce(authorizationUrl);
    const callback = await listener.next(options.waitMs ?? CALLBACK_WAIT_MS);
    try {
      const code = checked(callback.params, state, found.issuer);
      const tokens = await exchangeAuthorization(found.issuer, {
        metadata: found.metadata,
        clientInformation: client,
        authorizationCode: code,
        iss: callback.params.get('iss') ?? undefined,
        codeVerifier,
        redirectUri: redirectUrl,
        resource: found.resource,
      }).catch((e: unknown) => {
        throw asLoginError(e, `exchanging the code at ${found.issuer}`);
      });
      callback.answer(200, `berm: logged in to bermd at ${found.daemon}. You may close this window.\n`);
      return tokens;
    } catch (e) {
      callback.answer(400, `berm: the login to bermd at ${found.daemon} failed: ${(e as Error).message}\n`);
      throw e;
    }
  } finally {
    listener.close();
  }
}

/** The authorization code of a callback, once its state is this login's and it carries no error. */
function checked(params: URLSearchParams, state: string, issuer: string): string {
  if (params.get('state') !== state) {
    throw new CliError(
      'authorization-failed',
      'the browser came back with a state that is not the one this login sent, so it is not the answer to it; nothing was stored: run berm login again',
    );
  }
  const error = params.get('error');
  if (error !== null) {
    const description = params.get('error_description');
    const said = `${error}${description ? `: ${description}` : ''}`;
    throw new CliError(
      'authorization-failed',
      error === 'access_denied'
        ? `the authorization server ${issuer} did not grant access (${said}); nothing was stored`
        : `the authorization server ${issuer} refused the login (${said}); nothing was stored`,
      { issuer, error },
    );
  }
  const code = params.get('code');
  if (code === null || code === '') {
    throw new CliError(
      'authorization-failed',
      `the browser came back from ${issuer} with neither a code nor an error; nothing was stored`,
      {
        issuer,
      },
    );
  }
  return code;
}

interface Listener {
  port: number;
  /** The first request to /callback, within `waitMs`. */
  next(waitMs: number): Promise<Callback>;
  close(): void;
}

/** An HTTP server on an ephemeral loopback port, answering 404 to anything but `/callback`. */
async function listen(): Promise<Listener> {
  let arrived: ((callback: Callback) => void) | undefined;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const answer = (status: number, text: string): void => {
      // No connection is kept: closing the server then waits on none.
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
      response.end(text);
    };
    if (request.method !== 'GET' || url.pathname !== '/callback' || arrived === undefined) {
      answer(404, 'not found\n');
      return;
    }
    const deliver = arrived;
    arrived = undefined;
    deliver({ params: url.searchParams, answer });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    next: (waitMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          arrived = undefined;
          reject(
            new CliError(
              'authorization-failed',
              `no answer came back from the browser within ${Math.round(waitMs / 60_000)} minutes; nothing was stored: run berm login again`,
            ),
          );
        }, waitMs);
        arrived = (callback) => {
          clearTimeout(timer);
          resolve(callback);
        };
      }),
    close: () => {
      server.close();
      server.closeIdleConnections();
    },
  };
}
