/**
 * A stored login's tokens as commands use them: the access token while it is good, and a refreshed one
 * (RFC 6749 §6, with the same `resource`) once it has expired or bermd has refused it. A refresh runs
 * under the store's lock and first reads the file again: when another berm process refreshed meanwhile,
 * its token is taken, and the refresh token it replaced is never sent a second time.
 */
import type { OAuthTokens } from '@modelcontextprotocol/client';
import { CliError } from '../failure.js';
import type { Discovered } from './discover.js';
import type { LoginStore, RememberedClient, StoredLogin } from './store.js';

/** A token this close to its expiry counts as expired: it could lapse on its way, or on a server whose clock runs ahead. */
export const EXPIRY_MARGIN_MS = 30_000;

/** What a completed login stores. */
export function storedLogin(found: Discovered, client: RememberedClient, tokens: OAuthTokens, now: Date = new Date()): StoredLogin {
  const login: StoredLogin = {
    issuer: found.issuer,
    resource: found.resource,
    client_id: client.client_id,
    access_token: tokens.access_token,
  };
  return withTokens(login, tokens, now);
}

/** Whether the access token has expired, or will within the margin; one whose expiry the server did not give is taken as good. */
export function expiring(login: StoredLogin, now: Date = new Date()): boolean {
  return login.expires_at !== undefined && Date.parse(login.expires_at) - EXPIRY_MARGIN_MS <= now.getTime();
}

/**
 * The login stored for `key`, refreshed first when its access token is expiring or is `rejected` (the
 * one bermd just refused); undefined when there is none. Throws `login-expired` when it cannot be refreshed.
 */
export async function freshLogin(store: LoginStore, key: string, rejected?: string): Promise<StoredLogin | undefined> {
  const stale = (login: StoredLogin): boolean => expiring(login) || login.access_token === rejected;
  const seen = (await store.read()).logins[key];
  if (seen === undefined || !stale(seen)) return seen;
  return store.update(async (held) => {
    const login = held.logins[key];
    if (login === undefined || !stale(login)) return login;
    if (login.refresh_token === undefined) throw loginExpired(key, 'the authorization server gave no refresh token');
    // Loaded only to refresh: a command whose token is good does not load the SDK.
    const [{ OAuthError, refreshAuthorization }, { asLoginError, issuerMetadata }] = await Promise.all([
      import('@modelcontextprotocol/client'),
      import('./discover.js'),
    ]);
    const metadata = await issuerMetadata(login.issuer);
    const remembered = held.clients[login.issuer];
    const client: RememberedClient = remembered?.client_id === login.client_id ? remembered : { client_id: login.client_id };
    let tokens: OAuthTokens;
    try {
      tokens = await refreshAuthorization(login.issuer, {
        metadata,
        clientInformation: client,
        refreshToken: login.refresh_token,
        resource: login.resource,
      });
    } catch (e) {
      // The server answered, and said no: the grant has expired or been revoked.
      if (e instanceof OAuthError) throw loginExpired(key, `${login.issuer} refused to refresh it: ${e.message}`);
      throw asLoginError(e, `refreshing the login at ${login.issuer}`);
    }
    const refreshed = withTokens({ ...login }, tokens, new Date());
    held.logins[key] = refreshed;
    return refreshed;
  });
}

function withTokens(login: StoredLogin, tokens: OAuthTokens, now: Date): StoredLogin {
  login.access_token = tokens.access_token;
  if (tokens.refresh_token !== undefined) login.refresh_token = tokens.refresh_token;
  if (tokens.expires_in !== undefined) login.expires_at = new Date(now.getTime() + tokens.expires_in * 1000).toISOString();
  else delete login.expires_at;
  if (tokens.scope !== undefined) login.scope = tokens.scope;
  return login;
}

export function loginExpired(key: string, why: string): CliError {
  return new CliError('login-expired', `the login to bermd at ${key} has expired (${why}): run berm login --url ${key}`, { url: key });
}
