/**
 * From a bermd address to the authorization server that issues its tokens, as the MCP authorization
 * specification's client finds it: an unauthenticated request's 401 names bermd's Protected Resource
 * Metadata (RFC 9728, `resource_metadata`), whose `authorization_servers[0]` is the issuer, whose own
 * metadata is read by RFC 8414 and then OpenID discovery (the SDK's functions, which check that the
 * document's `issuer` is the one asked for).
 */
import { DaemonUnreachableError, isUnreachable } from '@berm/client';
import {
  type AuthorizationServerMetadata,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/client';
import { CliError } from '../failure.js';
import { loginKey } from './key.js';

export interface Discovered {
  /** bermd's address, as logins are keyed. */
  daemon: string;
  /** The resource the tokens are for (the metadata's `resource`), sent as RFC 8707's `resource`. */
  resource: string;
  /** What bermd says its tokens may carry. */
  scopesSupported: string[];
  issuer: string;
  metadata: AuthorizationServerMetadata;
}

/** What bermd and its authorization server say about logging in to the bermd at `url`. */
export async function discover(url: string): Promise<Discovered> {
  const daemon = loginKey(url);
  const resourceMetadataUrl = await challengeOf(daemon);
  const where = resourceMetadataUrl.href;
  let prm: Awaited<ReturnType<typeof discoverOAuthProtectedResourceMetadata>>;
  try {
    prm = await discoverOAuthProtectedResourceMetadata(daemon, { resourceMetadataUrl });
  } catch (e) {
    throw asLoginError(e, `bermd's resource metadata at ${where}`);
  }
  // A resource elsewhere would make the tokens good for another server: bermd could spend them there.
  if (!sameOrigin(prm.resource, daemon)) {
    throw new CliError(
      'authorization-failed',
      `bermd at ${daemon} names the resource ${prm.resource}, on another origin: berm logs in only for a resource bermd itself serves; check --url`,
      { url: daemon, resource: prm.resource },
    );
  }
  const issuer = prm.authorization_servers?.[0];
  if (issuer === undefined) {
    throw new CliError(
      'no-authorization-server',
      `bermd's resource metadata at ${where} names no authorization server: nothing to log in to`,
      {
        url: daemon,
      },
    );
  }
  const metadata = await issuerMetadata(issuer);
  return { daemon, resource: prm.resource, scopesSupported: prm.scopes_supported ?? [], issuer: metadata.issuer, metadata };
}

/** The metadata of the authorization server `issuer`, refused unless it supports PKCE with S256 (the MCP specification's rule). */
export async function issuerMetadata(issuer: string): Promise<AuthorizationServerMetadata> {
  let metadata: AuthorizationServerMetadata | undefined;
  try {
    metadata = await discoverAuthorizationServerMetadata(issuer);
  } catch (e) {
    throw asLoginError(e, `the authorization server ${issuer}`);
  }
  if (metadata === undefined) {
    throw new CliError(
      'authorization-failed',
      `the authorization server ${issuer} publishes no metadata (neither RFC 8414's /.well-known/oauth-authorization-server nor /.well-known/openid-configuration)`,
      { issuer },
    );
  }
  if (!(metadata.code_challenge_methods_supported ?? []).includes('S256')) {
    throw new CliError(
      'authorization-failed',
      `the authorization server ${issuer} does not say it supports PKCE with S256 (code_challenge_methods_supported), which berm requires`,
      { issuer },
    );
  }
  return metadata;
}

/** The `resource_metadata` of the 401 bermd answers a request without a token with. */
async function challengeOf(daemon: string): Promise<URL> {
  const probe = `${daemon}/harnesses`;
  let response: Response;
  try {
    response = await fetch(probe, { headers: { accept: 'application/json' }, redirect: 'manual' });
  } catch (e) {
    if (isUnreachable(e)) throw new DaemonUnreachableError(daemon, probe, e);
    throw new CliError('connection-lost', `the connection to bermd at ${daemon} failed (${causeOf(e)})`, { url: daemon });
  }
  await response.body?.cancel();
  if (response.status !== 401) {
    if (response.ok) {
      throw new CliError('no-authorization-server', `bermd at ${daemon} asks for no token: there is nothing to log in to`, { url: daemon });
    }
    throw new CliError('unexpected-response', `GET ${probe} answered ${response.status} rather than bermd's 401: is bermd at ${daemon}?`, {
      url: daemon,
      status: response.status,
    });
  }
  const { resourceMetadataUrl } = extractWWWAuthenticateParams(response);
  if (resourceMetadataUrl === undefined) {
    throw new CliError(
      'no-authorization-server',
      `bermd at ${daemon} takes tokens its operator hands out, and names no authorization server: give yours with --token or BERM_TOKEN`,
      { url: daemon },
    );
  }
  return resourceMetadataUrl;
}

/** An SDK failure while logging in, as the CLI reports it: the server could not be reached, or it answered what berm cannot use. */
export function asLoginError(e: unknown, what: string): CliError {
  if (e instanceof CliError) return e;
  if (isUnreachable(e)) {
    return new CliError('authorization-server-unreachable', `could not reach ${what} (${causeOf(e)}): is it up, and is the address right?`);
  }
  // An OAuth error's own code (invalid_client, invalid_grant) is kept beside berm's, for the caller to act on.
  const oauth = (e as { code?: unknown })?.code;
  return new CliError(
    'authorization-failed',
    `${what}: ${(e as Error)?.message ?? String(e)}`,
    typeof oauth === 'string' ? { oauth_error: oauth } : {},
  );
}

/** The most telling words of a network failure: the errno code fetch hides in its `cause`. */
export function causeOf(e: unknown): string {
  for (let cur: unknown = e, depth = 0; cur !== undefined && cur !== null && depth < 5; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return (e as Error)?.message ?? String(e);
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
