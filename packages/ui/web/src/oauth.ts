/**
 * Signing in through the authorization server of a bermd started with `--oauth-issuer`: the
 * authorization code flow with PKCE (S256) as a public client in the browser, with oauth4webapi for
 * each step. A 401's `resource_metadata` leads to bermd's Protected Resource Metadata (RFC 9728),
 * which names the resource and the authorization server; that server's metadata (RFC 8414, else
 * OpenID discovery) gives its endpoints. The page goes to the authorization endpoint with `resource`
 * (RFC 8707) and comes back to its own URL, where the code is exchanged at the token endpoint.
 *
 * Across the redirect the page keeps, in this tab's sessionStorage, the PKCE verifier, the state, the
 * server's metadata and the view to return to: one pending sign-in, read once and removed on return.
 * The access token itself never reaches any storage (credentials.ts).
 */
import * as oauth from 'oauth4webapi';
import { ApiError } from './api.js';

const PENDING = 'bermd-sign-in';

/** What the page needs to sign in: from bermd's metadata, and the client id the operator gave bermd. */
export interface OAuthOffer {
  /** The authorization server (the PRM's first). */
  issuer: string;
  /** bermd's resource identifier, the audience of the tokens it accepts. */
  resource: string;
  /** The scopes bermd names (`scopes_supported`); the authorization server grants what it will. */
  scopes: string[];
  /** `--oauth-page-client`; undefined when the operator gave none, and the page cannot sign in this way. */
  clientId: string | undefined;
}

interface Pending {
  state: string;
  verifier: string;
  as: oauth.AuthorizationServer;
  clientId: string;
  resource: string;
  redirectUri: string;
  /** The page's fragment when the sign-in started: the view it comes back to. */
  returnTo: string;
}

/** The `resource_metadata` of a `WWW-Authenticate: Bearer` challenge, if it carries one. */
export function resourceMetadataOf(challenge: string | undefined): string | undefined {
  return challenge === undefined ? undefined : /(?:^|[\s,])resource_metadata="([^"]*)"/i.exec(challenge)?.[1];
}

function failure(code: string, message: string): ApiError {
  return new ApiError(0, { code, message });
}

/** Plain HTTP to a loopback server only: bermd refuses any other `http://` issuer at start. */
function insecureAllowed(url: URL): boolean {
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

async function getJson(path: string): Promise<Record<string, unknown>> {
  const response = await fetch(path, { headers: { accept: 'application/json' } });
  if (!response.ok) throw failure('sign-in-unavailable', `${path} answered ${response.status}`);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * How to sign in, from the `resource_metadata` of bermd's 401. The metadata is read on the page's own
 * origin (the bermd that served it), whatever host `--resource` names.
 */
export async function offerOf(resourceMetadata: string): Promise<OAuthOffer> {
  const url = new URL(resourceMetadata, location.href);
  const [prm, page] = await Promise.all([getJson(url.pathname), getJson('/page.json')]);
  const servers = prm.authorization_servers;
  if (typeof prm.resource !== 'string' || !Array.isArray(servers) || typeof servers[0] !== 'string')
    throw failure('sign-in-unavailable', `${url.pathname} names no resource and authorization server`);
  const scopes = Array.isArray(prm.scopes_supported) ? prm.scopes_supported.filter((s): s is string => typeof s === 'string') : [];
  const clientId = typeof page.oauth_client_id === 'string' ? page.oauth_client_id : undefined;
  return { issuer: servers[0], resource: prm.resource, scopes, clientId };
}

/** The authorization server's metadata: RFC 8414's document first, then OpenID discovery's. */
async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  const options = { [oauth.allowInsecureRequests]: insecureAllowed(url) };
  let firstError: unknown;
  for (const algorithm of ['oauth2', 'oidc'] as const) {
    try {
      return await oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, { ...options, algorithm }));
    } catch (e) {
      firstError ??= e;
    }
  }
  throw failure('sign-in-unavailable', `the authorization server ${issuer} could not be read: ${describe(firstError)}`);
}

/** The page's own URL without query or fragment: where the authorization server sends the browser back. */
function redirectUri(): string {
  return `${location.origin}${location.pathname}`;
}

/** Goes to the authorization server to sign in; the page comes back through `finishSignIn`. */
export async function startSignIn(offer: OAuthOffer): Promise<void> {
  if (offer.clientId === undefined) throw failure('sign-in-unavailable', 'bermd was given no --oauth-page-client');
  const as = await discover(offer.issuer);
  if (as.authorization_endpoint === undefined || as.token_endpoint === undefined)
    throw failure('sign-in-unavailable', `the authorization server ${offer.issuer} names no authorization or token endpoint`);
  // The page's CSP lets it reach the issuer's origin alone (bermd's ui/ room).
  if (new URL(as.token_endpoint).origin !== new URL(offer.issuer).origin)
    throw failure(
      'sign-in-unavailable',
      `the token endpoint ${as.token_endpoint} is not on the origin of ${offer.issuer}, the one the page may reach; sign in with a token instead`,
    );
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const pending: Pending = {
    state,
    verifier,
    as,
    clientId: offer.clientId,
    resource: offer.resource,
    redirectUri: redirectUri(),
    returnTo: location.hash,
  };
  const target = new URL(as.authorization_endpoint);
  target.searchParams.set('response_type', 'code');
  target.searchParams.set('client_id', offer.clientId);
  target.searchParams.set('redirect_uri', pending.redirectUri);
  target.searchParams.set('scope', offer.scopes.join(' '));
  target.searchParams.set('resource', offer.resource);
  target.searchParams.set('state', state);
  target.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  target.searchParams.set('code_challenge_method', 'S256');
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  location.assign(target.href);
}

/** A sign-in the page came back from: its access token, or why it failed. */
export type Returned = { token: string } | { error: ApiError };

/**
 * When the page loads with an authorization response in its URL and a sign-in pending, exchanges the
 * code for an access token. The pending sign-in is removed first (one use, whatever happens), and the
 * response taken off the URL, back to the view the sign-in started from.
 */
export async function finishSignIn(): Promise<Returned | undefined> {
  const parameters = new URLSearchParams(location.search);
  if (!parameters.has('state')) return undefined;
  let pending: Pending | undefined;
  try {
    const text = sessionStorage.getItem(PENDING);
    sessionStorage.removeItem(PENDING);
    pending = text === null ? undefined : (JSON.parse(text) as Pending);
  } catch {
    pending = undefined;
  }
  history.replaceState(null, '', `${location.pathname}${pending?.returnTo ?? location.hash}`);
  if (pending === undefined)
    return { error: failure('sign-in-failed', 'the page came back from a sign-in it did not start; sign in again') };
  try {
    const client: oauth.Client = { client_id: pending.clientId };
    const options = { [oauth.allowInsecureRequests]: insecureAllowed(new URL(pending.as.issuer)) };
    const callback = oauth.validateAuthResponse(pending.as, client, parameters, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(
      pending.as,
      client,
      oauth.None(),
      callback,
      pending.redirectUri,
      pending.verifier,
      {
        ...options,
        additionalParameters: { resource: pending.resource },
      },
    );
    const answer = await oauth.processAuthorizationCodeResponse(pending.as, client, response);
    return { token: answer.access_token };
  } catch (e) {
    if (e instanceof oauth.AuthorizationResponseError)
      return {
        error: failure(
          'sign-in-refused',
          `the authorization server refused the sign-in: ${e.error}${e.error_description ? ` (${e.error_description})` : ''}`,
        ),
      };
    return { error: failure('sign-in-failed', `the sign-in could not be completed: ${describe(e)}`) };
  }
}

function describe(e: unknown): string {
  if (e instanceof oauth.ResponseBodyError) return `${e.error}${e.error_description ? ` (${e.error_description})` : ''}`;
  return e instanceof Error ? e.message : String(e);
}
