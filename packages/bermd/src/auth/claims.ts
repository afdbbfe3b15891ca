/**
 * The principal an access token's claims name, whether they come from a JWT (RFC 9068) or from an
 * introspection answer (RFC 7662): both say who with `sub` and `client_id`, and what with `scope`.
 */
import { isBermScope } from '@berm/protocol';
import type { TokenRefusal } from './authentication.js';
import { Principal } from './principal.js';

/** The most characters a principal's name from a token may have, as the `--access` file's. */
const MAX_NAME = 128;
/** What a name may hold as it is: what a log line and `WWW-Authenticate` carry unquoted. */
const PLAIN = /[A-Za-z0-9._@:+-]/;

/**
 * `text` with every character outside the plain set written as `%XX` of its UTF-8 bytes: two different
 * subjects stay two different names (`auth0|42` is `auth0%7C42`), and none carries a space or a quote.
 */
function nameOf(text: string): string {
  let out = '';
  for (const char of text) {
    if (PLAIN.test(char)) out += char;
    else for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The principal's name: the client's (`client_id`) when no user is named (no `sub`, or `sub` is the client
 * itself, as RFC 9068 §2.2 has it for the client credentials grant), the user's (`sub`) otherwise.
 */
function subjectOf(claims: Record<string, unknown>): string | TokenRefusal {
  const sub = typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : undefined;
  const client = typeof claims.client_id === 'string' && claims.client_id !== '' ? claims.client_id : undefined;
  const who = sub === undefined || sub === client ? client : sub;
  if (who === undefined) return { refused: 'the token names no subject (sub) and no client (client_id)' };
  const name = nameOf(who);
  if (name.length > MAX_NAME)
    return { refused: `the token's subject is longer than the ${MAX_NAME} characters a principal's name may have` };
  return name;
}

/**
 * The berm scopes the claims grant: `scope`, space-separated (RFC 8693 §4.2, RFC 9068 §2.2.3), and `scp`,
 * which some servers send instead, as an array or a string. Scopes bermd does not know are left out.
 */
function scopesOf(claims: Record<string, unknown>): string[] {
  const words: string[] = [];
  for (const value of [claims.scope, claims.scp]) {
    if (typeof value === 'string') words.push(...value.split(' '));
    else if (Array.isArray(value)) for (const item of value) if (typeof item === 'string') words.push(item);
  }
  return words.filter(isBermScope);
}

/** The principal the claims of a token bermd accepted name, or why they name none. */
export function principalOfClaims(claims: Record<string, unknown>): Principal | TokenRefusal {
  const name = subjectOf(claims);
  if (typeof name !== 'string') return name;
  return new Principal(name, scopesOf(claims));
}
