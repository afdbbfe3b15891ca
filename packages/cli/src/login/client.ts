/**
 * The OAuth client berm logs in as: the one the user names (`--client-id`), else the one registered
 * before with this authorization server, else one registered now by dynamic registration (RFC 7591),
 * remembered for next time. berm is a native public client (RFC 8252): no secret of its own, PKCE, and a
 * loopback redirect whose port the server must let vary (§7.3), so one registration serves every login.
 */
import { type OAuthClientMetadata, registerClient } from '@modelcontextprotocol/client';
import { CliError } from '../failure.js';
import type { Discovered } from './discover.js';
import { asLoginError } from './discover.js';
import type { LoginStore, RememberedClient } from './store.js';

/** The redirect URI registered: the loopback address with no port (RFC 8252 §7.3), and the path berm listens on. */
export const REGISTERED_REDIRECT = 'http://127.0.0.1/callback';

export const CLIENT_METADATA: OAuthClientMetadata = {
  client_name: 'berm',
  redirect_uris: [REGISTERED_REDIRECT],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  application_type: 'native',
};

/** The client to log in as; registers one (and remembers it) when the server offers registration and none is known. */
export async function clientFor(found: Discovered, store: LoginStore, clientId?: string): Promise<RememberedClient> {
  if (clientId !== undefined) return { client_id: clientId };
  const known = (await store.read()).clients[found.issuer];
  if (known !== undefined && !secretExpired(known)) return known;
  if (found.metadata.registration_endpoint === undefined) {
    throw new CliError(
      'client-id-needed',
      `the authorization server ${found.issuer} offers no dynamic registration: give --client-id, the id of a public client registered there with the redirect URI ${REGISTERED_REDIRECT} (any port)`,
      { issuer: found.issuer },
    );
  }
  let registered: Awaited<ReturnType<typeof registerClient>>;
  try {
    registered = await registerClient(found.issuer, { metadata: found.metadata, clientMetadata: CLIENT_METADATA });
  } catch (e) {
    throw asLoginError(e, `registering berm with the authorization server ${found.issuer}`);
  }
  const client: RememberedClient = { client_id: registered.client_id };
  if (registered.client_secret !== undefined) client.client_secret = registered.client_secret;
  if (registered.client_secret_expires_at !== undefined) client.client_secret_expires_at = registered.client_secret_expires_at;
  await store.update((held) => {
    held.clients[found.issuer] = client;
  });
  return client;
}

/** Forgets the client registered with `issuer`: the server no longer knows it. */
export async function forgetClient(store: LoginStore, issuer: string): Promise<void> {
  await store.update((held) => {
    delete held.clients[issuer];
  });
}

function secretExpired(client: RememberedClient): boolean {
  const at = client.client_secret_expires_at;
  return client.client_secret !== undefined && at !== undefined && at !== 0 && at * 1000 <= Date.now();
}
