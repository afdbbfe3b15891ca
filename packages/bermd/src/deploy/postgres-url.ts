/**
 * The PostgreSQL store's connection string as bermd shows it: which strings name such a store, the store
 * named without its password (`storeLocation`, the only form logs and messages use), and every form of
 * the password a log line could hold (`storePasswords`, which the log redacts).
 */
import { parse as parseConnectionString } from 'pg-connection-string';

/** Only these schemes name a PostgreSQL store. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** `postgres://user@host:port/db`: the store named without its password or parameters, for logs and messages. */
export function storeLocation(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username === '' ? '' : `${decodeURIComponent(u.username)}@`;
    return `${u.protocol}//${user}${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(unreadable URL)';
  }
}

/**
 * The password the connection string holds, in every form the log could show it: as written, as the
 * URL reads it, percent-decoded, and as node-postgres' own parser reads it (what it sends the server).
 * They differ when the text is not valid percent-encoding (`pa%zz`): decodeURIComponent throws on it,
 * while pg-connection-string re-encodes the whole string first and sends `pa%zz` as written. Empty
 * when the URL holds none.
 */
export function storePasswords(url: string): string[] {
  const found = new Set<string>();
  const add = (read: () => string | null | undefined): void => {
    try {
      const value = read();
      if (typeof value === 'string' && value !== '') found.add(value);
    } catch {
      // A form that does not read is not what anything sends or shows.
    }
  };
  // The authority ends at the first `/`, `?` or `#`, its user information at its last `@`.
  const written = /^[^:]*:\/\/[^:/?#@]*:([^/?#]*)@/.exec(url)?.[1];
  add(() => written);
  add(() => decodeURIComponent(written ?? ''));
  add(() => new URL(url).password);
  add(() => decodeURIComponent(new URL(url).password));
  add(() => new URL(url).searchParams.get('password'));
  add(() => parseConnectionString(url).password);
  return [...found];
}
