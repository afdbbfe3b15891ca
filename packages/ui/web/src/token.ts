/**
 * The bearer token of a bermd started with `--token-file`, as the operator typed it. It is kept in
 * this tab's sessionStorage (gone when the tab closes) and sent only as an Authorization header:
 * never a cookie, so no other page can make the browser send it.
 */
const KEY = 'bermd-token';

function stored(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

let token: string | null = stored();

export function setToken(value: string | null): void {
  token = value;
  try {
    if (value === null) sessionStorage.removeItem(KEY);
    else sessionStorage.setItem(KEY, value);
  } catch {
    // storage refused: the token lasts as long as the page
  }
}

/** The Authorization header to send, if there is a token. */
export function authHeaders(): Record<string, string> {
  return token === null || token === '' ? {} : { authorization: `Bearer ${token}` };
}
