/**
 * Access tokens that are JWTs (RFC 9068), verified with `jose` against the authorization server's key
 * set (`jwks_uri`): the signature by an asymmetric algorithm, the issuer, the lifetime and, first of all,
 * the audience, which must include this bermd's resource (RFC 8707): a token minted for another resource
 * is refused, never passed on. The key set is fetched when first needed, kept, and fetched again when a
 * token names a key it lacks (a rotation), at most once per cooldown. A token accepted is kept until it
 * expires (token-cache.ts): verifying its signature again on every request would cost more than all the
 * rest of a call's authentication.
 */
import type { errors, JWTVerifyGetKey } from 'jose';
import { BermdError } from '../errors.js';
import type { TokenRefusal } from './authentication.js';
import { principalOfClaims } from './claims.js';
import type { Principal } from './principal.js';
import { numberDefault } from '../limits.js';
import { TokenCache } from './token-cache.js';

/**
 * How far apart bermd's clock and the authorization server's may be before `exp` and `nbf` are held
 * against a token, by default (`--oauth-clock-skew`): a minute, enough for clocks kept by NTP and short
 * beside token lifetimes of minutes to hours, so an expired token is refused soon after its end.
 */
export const CLOCK_SKEW_SECONDS = numberDefault('oauth-clock-skew') / 1000;

/**
 * The signature algorithms accepted: asymmetric ones alone. `none` signs nothing, and an HS* token is
 * signed with a shared secret, which a public key set could be passed off as.
 */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** The `typ` headers of an access token (RFC 9068 §2.1), and the plain `JWT` many servers still write. */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt']);

export interface JwtVerifierOptions {
  issuer: string;
  /** `--resource`: what the token's `aud` must include. */
  resource: string;
  jwksUri: string;
  /** The least time between two fetches of the key set for an unknown `kid`; jose's 30 s when unset. */
  cooldownMs?: number;
  /** `--oauth-clock-skew`, in seconds; `CLOCK_SKEW_SECONDS` when unset. */
  clockSkewSeconds?: number;
}

/** Whether `token` has the shape of a signed JWT: three base64url parts (JWS compact serialisation). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

export class JwtVerifier {
  /**
   * jose and the key set made with it. jose is imported when a verifier is made, not with this module,
   * which the auth room's door brings into every bermd: only one that is an OAuth resource server needs
   * it (docs/decisions.md).
   */
  private readonly jose: Promise<{ module: typeof import('jose'); keys: JWTVerifyGetKey }>;
  private readonly accepted = new TokenCache();

  constructor(private readonly options: JwtVerifierOptions) {
    const jwks = new URL(options.jwksUri);
    this.jose = import('jose').then((module) => ({
      module,
      keys: module.createRemoteJWKSet(jwks, { cooldownDuration: options.cooldownMs }),
    }));
    // Awaited by every verification; this only keeps a failed import from being reported as unhandled first.
    this.jose.catch(() => {});
  }

  /** The principal `token` names; a refusal in words for the log and the 401; throws `auth-unavailable` when the keys cannot be fetched. */
  async verify(token: string): Promise<Principal | TokenRefusal> {
    const held = this.accepted.get(token);
    if (held !== undefined) return held;
    const jose = await this.jose;
    let claims: Record<string, unknown>;
    let typ: string | undefined;
    try {
      const verified = await jose.module.jwtVerify(token, jose.keys, {
        issuer: this.options.issuer,
        audience: this.options.resource,
        algorithms: JWT_ALGORITHMS,
        clockTolerance: this.options.clockSkewSeconds ?? CLOCK_SKEW_SECONDS,
        requiredClaims: ['exp'],
      });
      claims = verified.payload;
      typ = verified.protectedHeader.typ;
    } catch (e) {
      return this.refusalOf(e, jose.module.errors);
    }
    if (typ !== undefined && !ACCESS_TOKEN_TYPES.has(typ.toLowerCase()))
      return { refused: 'the JWT is not an access token (its typ says otherwise)' };
    // A token bound to a key the client must prove it holds (DPoP, mutual TLS) is not a bearer token.
    if (claims.cnf !== undefined) return { refused: 'the token is bound to a key (cnf), and bermd accepts bearer tokens only' };
    const principal = principalOfClaims(claims);
    if (!('refused' in principal)) this.accepted.set(token, principal, claims.exp);
    return principal;
  }

  private refusalOf(e: unknown, joseErrors: typeof errors): TokenRefusal {
    if (!(e instanceof joseErrors.JOSEError)) throw this.unavailable(e);
    switch (e.code) {
      case 'ERR_JWT_EXPIRED':
        return { refused: 'the token has expired' };
      case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
        return { refused: claimRefusal((e as errors.JWTClaimValidationFailed).claim, this.options) };
      case 'ERR_JOSE_ALG_NOT_ALLOWED':
        return {
          refused: `the token is signed with an algorithm bermd does not accept (only ${JWT_ALGORITHMS.join(', ')}; never none or HS*)`,
        };
      case 'ERR_JWKS_NO_MATCHING_KEY':
        return { refused: "no key of the authorization server's key set matches the token's kid" };
      case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
        return { refused: "the token's signature does not verify with the authorization server's key" };
      case 'ERR_JWS_INVALID':
      case 'ERR_JWT_INVALID':
        return { refused: 'the token is not a well-formed signed JWT' };
      case 'ERR_JOSE_NOT_SUPPORTED':
        return { refused: 'the token uses a JOSE feature bermd does not support' };
      default:
        // The key set could not be fetched or read: the token is neither good nor bad yet.
        throw this.unavailable(e);
    }
  }

  private unavailable(e: unknown): BermdError {
    const cause = (e as { cause?: { code?: string } }).cause?.code;
    return new BermdError(
      'auth-unavailable',
      `the authorization server's keys (${this.options.jwksUri}) cannot be fetched: ${(e as Error).message}${cause === undefined ? '' : ` (${cause})`}`,
      { issuer: this.options.issuer },
      { cause: e },
    );
  }
}

/** A claim jose found wrong, in words; the claim's name is jose's, never the token's text. */
function claimRefusal(claim: string, { issuer, resource }: JwtVerifierOptions): string {
  switch (claim) {
    case 'aud':
      return `the token is not for this resource: its audience (aud) does not include ${resource}`;
    case 'iss':
      return `the token was not issued by ${issuer}`;
    case 'nbf':
      return 'the token is not valid yet (nbf)';
    case 'exp':
      return 'the token has no expiry (exp), or one that is not a time';
    case 'iat':
      return 'the token says it was issued in the future (iat)';
    default:
      return `the token's ${claim} claim is not acceptable`;
  }
}
