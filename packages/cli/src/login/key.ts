import { daemonUrl } from '@berm/client';

/**
 * The address a login is kept under: bermd's, as the control API's client takes it, without a query, a
 * fragment or credentials, and without a trailing `/mcp`, so that `berm mcp --url http://host/mcp` finds
 * the login `berm login --url http://host` made. Throws `bad-url`.
 */
export function loginKey(url: string): string {
  const parsed = daemonUrl(url);
  let path = parsed.pathname.replace(/\/+$/, '');
  if (path.endsWith('/mcp')) path = path.slice(0, -'/mcp'.length);
  return `${parsed.origin}${path.replace(/\/+$/, '')}`;
}
