/**
 * The principals a static token names: `--access` entries and `--token-file`'s operator. A token given is
 * hashed once and compared with every stored hash in constant time, so how long a refusal takes says
 * nothing of how close a guess came.
 */
import { timingSafeEqual } from 'node:crypto';
import { type AccessEntry, tokenDigest } from './access-file.js';
import { OPERATOR, Principal } from './principal.js';

interface Held {
  digest: Buffer;
  principal: Principal;
  entry: AccessEntry;
}

/** What a reload changed, by principal name: never a token or a hash. */
export interface AccessChange {
  added: string[];
  removed: string[];
  changed: string[];
}

export class StaticPrincipals {
  private held: Held[];
  private readonly operator?: { digest: Buffer; principal: Principal };

  /** `entries` from the access file; `operatorToken`, `--token-file`'s, names the operator. */
  constructor(entries: readonly AccessEntry[], operatorToken?: string) {
    this.held = entries.map(heldOf);
    if (operatorToken !== undefined) this.operator = { digest: tokenDigest(operatorToken), principal: OPERATOR };
  }

  get size(): number {
    return this.held.length;
  }

  /** The principal `token` names, or undefined. Every stored hash is compared, whichever matches. */
  find(token: string): Principal | undefined {
    const digest = tokenDigest(token);
    let found: Principal | undefined;
    if (this.operator !== undefined && timingSafeEqual(digest, this.operator.digest)) found = this.operator.principal;
    for (const held of this.held) if (timingSafeEqual(digest, held.digest) && found === undefined) found = held.principal;
    return found;
  }

  /** Holds `entries` from now on (SIGHUP), and says which principals changed. */
  replace(entries: readonly AccessEntry[]): AccessChange {
    const before = new Map(this.held.map((h) => [h.entry.name, h.entry]));
    const next = entries.map(heldOf);
    const after = new Map(next.map((h) => [h.entry.name, h.entry]));
    this.held = next;
    const change: AccessChange = { added: [], removed: [], changed: [] };
    for (const [name, entry] of after) {
      const old = before.get(name);
      if (old === undefined) change.added.push(name);
      else if (old.token_sha256 !== entry.token_sha256 || [...old.scopes].sort().join(' ') !== [...entry.scopes].sort().join(' '))
        change.changed.push(name);
    }
    for (const name of before.keys()) if (!after.has(name)) change.removed.push(name);
    return change;
  }
}

function heldOf(entry: AccessEntry): Held {
  return { digest: Buffer.from(entry.token_sha256, 'hex'), principal: new Principal(entry.name, entry.scopes), entry };
}
