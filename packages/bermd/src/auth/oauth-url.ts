/**
 * The URLs an OAuth resource server is given (`--oauth-issuer`, `--resource`) and finds (`jwks_uri`,
 * `introspection_endpoint`): each is reached or named over TLS, since a token or a key fetched over plain
 * HTTP could be read or swapped on the way. Loopback is the one exception: nothing crosses a network
 * there, and it is where tests and a proxy beside bermd listen.
 */

/** The loopback hosts a plain `http:` URL may name, as `URL.hostname` spells them. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether `url` is `https:`, or `http:` on a loopback host. */
export function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
}

/**
 * Why `text`, given to `flag`, is not a URL an OAuth resource server can use, or undefined when it is:
 * `https://`, or `http://` on loopback, without credentials, query or fragment (an issuer identifier has
 * none, RFC 8414 §2; a resource indicator has no fragment and should have no query, RFC 8707 §2).
 */
export function oauthUrlRefusal(flag: string, text: string, example: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${flag} ${text}: expected a URL such as ${example}`;
  }
  if (!isSecureOrLoopback(url))
    return `${flag} ${text}: must be https:// (plain http:// only on loopback: 127.0.0.1, localhost or [::1]), so that tokens and keys cannot be read or changed on the way`;
  if (url.username !== '' || url.password !== '') return `${flag} ${text}: must not carry a user name or password`;
  if (url.search !== '' || url.hash !== '' || text.includes('#') || text.includes('?'))
    return `${flag} ${text}: must have no query (?) or fragment (#), as ${example}`;
  return undefined;
}
