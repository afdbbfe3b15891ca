// Static principals for the tests: an `--access` file written as `bermd token new` writes it (each
// token's SHA-256 only, mode 0600), the tokens kept here to send, and requests carrying them.
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import { newToken, tokenSha256, writeAccessFile } from '../dist/auth/index.js';

export interface Granted {
  name: string;
  scopes: string[];
}

export interface AccessFile {
  file: string;
  /** Each principal's token, by name. */
  tokens: Record<string, string>;
}

/** Writes `principals` to `dir/access.json` with fresh tokens (or the ones given in `tokens`). */
export async function writeAccess(dir: string, principals: Granted[], tokens: Record<string, string> = {}): Promise<AccessFile> {
  const file = path.join(dir, 'access.json');
  const held: Record<string, string> = {};
  for (const p of principals) held[p.name] = tokens[p.name] ?? newToken();
  await writeAccessFile(
    file,
    principals.map((p) => ({ name: p.name, token_sha256: tokenSha256(held[p.name]!), scopes: p.scopes })),
  );
  await chmod(file, 0o600);
  return { file, tokens: held };
}

/** `fetch` with `token` as the bearer (none when undefined). */
export function as(token: string | undefined, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
  return fetch(url, { ...init, headers });
}

/** The `{"error": {...}}` of an answer. */
export async function errorOf(res: Response): Promise<{ code: string; message: string; scope?: string }> {
  return ((await res.json()) as { error: { code: string; message: string; scope?: string } }).error;
}

/** The header that sends `token`. */
export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
