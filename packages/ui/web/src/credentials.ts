/**
 * What the page sends bermd as `Authorization: Bearer`: a static token the operator typed (`--token-file`,
 * `--access`), or an access token from the authorization server (`--oauth-issuer`).
 *
 * A static token is kept in this tab's sessionStorage, as the operator would otherwise type it at every
 * reload, and it lasts until the tab closes or the page signs out. An access token lives in this module's
 * memory only: a reload forgets it and signs in again, so no script reading the page's storage ever finds
 * one. Either is sent only as a header, never a cookie, so no other page can make the browser send it.
 */
const KEY = 'bermd-token';

export type CredentialKind = 'token' | 'oauth';

interface Credential {
  kind: CredentialKind;
  token: string;
}

function stored(): Credential | undefined {
  try {
    const token = sessionStorage.getItem(KEY);
    return token === null || token === '' ? undefined : { kind: 'token', token };
  } catch {
    return undefined;
  }
}

let current: Credential | undefined = stored();

function store(token: string | undefined): void {
  try {
    if (token === undefined) sessionStorage.removeItem(KEY);
    else sessionStorage.setItem(KEY, token);
  } catch {
    // storage refused: the token lasts as long as the page
  }
}

/** A static token the operator gave. */
export function holdStaticToken(token: string): void {
  current = { kind: 'token', token };
  store(token);
}

/** An access token from the authorization server: memory only. */
export function holdAccessToken(token: string): void {
  current = { kind: 'oauth', token };
  store(undefined);
}

/** Signs out: whatever the page held is forgotten. */
export function forgetCredentials(): void {
  current = undefined;
  store(undefined);
}

/** How the page is signed in now, if it is. */
export function credentialKind(): CredentialKind | undefined {
  return current?.kind;
}

/** The Authorization header to send, if there is a credential. */
export function authHeaders(): Record<string, string> {
  return current === undefined ? {} : { authorization: `Bearer ${current.token}` };
}
