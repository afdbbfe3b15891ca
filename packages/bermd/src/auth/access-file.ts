/**
 * The `--access` file: static principals for teams without an identity provider, a JSON array of
 * `{"name", "token_sha256", "scopes"}`. Tokens are high-entropy (`newToken`), so the hex SHA-256 of each
 * is all the file holds: reading it gives no one a token. Read whole and checked entry by entry, each
 * problem said with its place; `bermd token new` adds entries (token-command.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { isBermScope } from '@berm/protocol';

/** One principal as the file holds it. */
export interface AccessEntry {
  name: string;
  token_sha256: string;
  scopes: string[];
}

/** A principal's name: printable, without spaces or quotes, as logs and `WWW-Authenticate` carry it. */
export const PRINCIPAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export class AccessFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AccessFileError';
  }
}

/** A token's SHA-256: what the access file stores (in hex), what a token given is compared by, what the token cache keys on. */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The hex SHA-256 of a token, as the file stores it. */
export function tokenSha256(token: string): string {
  return tokenDigest(token).toString('hex');
}

/** A fresh token: 256 random bits, URL-safe, with a prefix that tells a reader (and a secret scanner) what it is. */
export function newToken(): string {
  return `berm_${randomBytes(32).toString('base64url')}`;
}

/** The entries of the file's text; `file` names it in what is refused. */
export function parseAccess(text: string, file: string): AccessEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new AccessFileError(`--access ${file}: not JSON (${(e as Error).message})`);
  }
  if (!Array.isArray(data)) throw new AccessFileError(`--access ${file}: expected a JSON array of {"name", "token_sha256", "scopes"}`);
  const names = new Set<string>();
  const hashes = new Set<string>();
  return data.map((item: unknown, i) => {
    const where = `--access ${file}: entry ${i}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new AccessFileError(`${where}: expected an object {"name", "token_sha256", "scopes"}`);
    const { name, token_sha256, scopes, ...rest } = item as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) throw new AccessFileError(`${where}: unknown member ${JSON.stringify(unknown)}`);
    if (typeof name !== 'string' || !PRINCIPAL_NAME.test(name))
      throw new AccessFileError(`${where}: "name" must be 1 to 128 letters, digits or . _ @ : + - (starting with a letter or digit)`);
    if (names.has(name)) throw new AccessFileError(`${where}: the name ${name} is given twice`);
    names.add(name);
    if (typeof token_sha256 !== 'string' || !SHA256_HEX.test(token_sha256))
      throw new AccessFileError(`${where} (${name}): "token_sha256" must be the 64 lower-case hex digits of the token's SHA-256`);
    if (hashes.has(token_sha256)) throw new AccessFileError(`${where} (${name}): the same token is given to two principals`);
    hashes.add(token_sha256);
    if (!Array.isArray(scopes) || !scopes.every((s): s is string => typeof s === 'string'))
      throw new AccessFileError(`${where} (${name}): "scopes" must be an array of scope names`);
    const strange = scopes.find((s) => !isBermScope(s));
    if (strange !== undefined)
      throw new AccessFileError(
        `${where} (${name}): unknown scope ${JSON.stringify(strange)}; use berm:read, berm:deploy, berm:force, berm:call or berm:call:NAME`,
      );
    return { name, token_sha256, scopes: [...new Set(scopes)] };
  });
}

export async function readAccessFile(file: string): Promise<AccessEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new AccessFileError(`--access ${file}: ${(e as Error).message}`);
  }
  return parseAccess(text, file);
}

/** Writes `entries` to `file` whole or not at all (a reader, a SIGHUP, never sees half a file). */
export async function writeAccessFile(file: string, entries: readonly AccessEntry[]): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, file);
}
