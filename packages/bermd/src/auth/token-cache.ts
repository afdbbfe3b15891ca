/**
 * Tokens accepted, kept until they expire: a client sends the same token with every request, and what
 * it names cannot change before its `exp`. Bounded (the least recently used goes first) and keyed by the
 * token's SHA-256, so the cache holds no token. Only accepted tokens are kept: a flood of made-up ones
 * cannot push good ones out.
 */
import { LRUCache } from 'lru-cache';
import { tokenDigest } from './access-file.js';
import type { Principal } from './principal.js';

/** How many accepted tokens are kept at once, per verifier. */
export const TOKEN_CACHE_SIZE = 10_000;

export class TokenCache {
  private readonly held = new LRUCache<string, Principal>({ max: TOKEN_CACHE_SIZE });

  private static keyOf(token: string): string {
    return tokenDigest(token).toString('base64url');
  }

  /** The principal `token` was found to name, while it has not expired. */
  get(token: string): Principal | undefined {
    return this.held.get(TokenCache.keyOf(token));
  }

  /** Keeps what `token` names until `exp` (seconds since the epoch); a token without one is not kept. */
  set(token: string, principal: Principal, exp: unknown): void {
    if (typeof exp !== 'number') return;
    const ttl = Math.floor(exp * 1000 - Date.now());
    if (ttl > 0) this.held.set(TokenCache.keyOf(token), principal, { ttl });
  }
}
