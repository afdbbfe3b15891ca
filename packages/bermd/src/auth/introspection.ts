/**
 * Opaque access tokens, known only to the authorization server that issued them: bermd asks its
 * introspection endpoint (RFC 7662), authenticating as its own client (`--oauth-introspection-client`,
 * HTTP Basic as RFC 6749 §2.3.1 spells it). An active token is held to the same rules as a JWT: its issuer,
 * if named, is the one given, and its audience must include this bermd's resource (RFC 8707). An accepted
 * token is kept until it expires (token-cache.ts), so a client sending the same token on every request
 * costs one question; a token without `exp` is asked about every time.
 */
import { BermdError } from '../errors.js';
import type { TokenRefusal } from './authentication.js';
import { principalOfClaims } from './claims.js';
import { CLOCK_SKEW_SECONDS } from './jwt-verifier.js';
import type { Principal } from './principal.js';
import { TokenCache } from './token-cache.js';

/** How long one introspection request may take. */
export const INTROSPECTION_TIMEOUT_MS = 10_000;

/** The resource server's own credentials at the authorization server. */
export interface IntrospectionClient {
  id: string;
  secret: string;
}

export interface IntrospectionOptions {
  issuer: string;
  resource: string;
  endpoint: string;
  client: IntrospectionClient;
  /** `--oauth-clock-skew`, in seconds; `CLOCK_SKEW_SECONDS` when unset. */
  clockSkewSeconds?: number;
}

function audienceIncludes(aud: unknown, resource: string): boolean {
  return aud === resource || (Array.isArray(aud) && aud.includes(resource));
}

export class Introspection {
  private readonly accepted = new TokenCache();
  private readonly authorization: string;

  constructor(private readonly options: IntrospectionOptions) {
    const { id, secret } = options.client;
    this.authorization = `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  }

  /** The principal `token` names; a refusal in words; throws `auth-unavailable` when the endpoint does not answer. */
  async verify(token: string): Promise<Principal | TokenRefusal> {
    const held = this.accepted.get(token);
    if (held !== undefined) return held;
    const claims = await this.ask(token);
    if (claims.active !== true) return { refused: 'the authorization server says the token is not active (revoked, expired or unknown)' };
    if (claims.iss !== undefined && claims.iss !== this.options.issuer)
      return { refused: `the token was not issued by ${this.options.issuer}` };
    if (!audienceIncludes(claims.aud, this.options.resource))
      return { refused: `the token is not for this resource: its audience (aud) does not include ${this.options.resource}` };
    const now = Date.now() / 1000;
    const skew = this.options.clockSkewSeconds ?? CLOCK_SKEW_SECONDS;
    if (typeof claims.exp === 'number' && claims.exp + skew <= now) return { refused: 'the token has expired' };
    if (typeof claims.nbf === 'number' && claims.nbf - skew > now) return { refused: 'the token is not valid yet (nbf)' };
    const principal = principalOfClaims(claims);
    if (!('refused' in principal)) this.accepted.set(token, principal, claims.exp);
    return principal;
  }

  private async ask(token: string): Promise<Record<string, unknown>> {
    const { endpoint, issuer } = this.options;
    const fail = (reason: string, cause?: unknown): BermdError =>
      new BermdError('auth-unavailable', `the introspection endpoint ${endpoint} ${reason}`, { issuer }, { cause });
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: { authorization: this.authorization, accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        signal: AbortSignal.timeout(INTROSPECTION_TIMEOUT_MS),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code;
      throw fail(`cannot be reached: ${(e as Error).message}${cause === undefined ? '' : ` (${cause})`}`, e);
    }
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel();
      throw fail(`refuses bermd's client (${response.status}): check the credentials in --oauth-introspection-client`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw fail(`answered ${response.status}`);
    }
    let answer: unknown;
    try {
      answer = await response.json();
    } catch (e) {
      throw fail('answered something that is not JSON', e);
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw fail('answered something that is not a JSON object');
    return answer as Record<string, unknown>;
  }
}
