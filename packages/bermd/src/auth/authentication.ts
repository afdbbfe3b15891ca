/**
 * Who a request's bearer token names. Static tokens (`--token-file`, `--access`) are looked up first, as a
 * hash compare costs nothing; then, when bermd is an OAuth resource server, the token verifier
 * (`--oauth-issuer`). A bermd with neither asks for no token: every request is `anonymous`.
 */
import { ANONYMOUS, type Principal } from './principal.js';
import type { StaticPrincipals } from './static-principals.js';

/** Why a token given was not accepted, in words for the log and the 401's `error_description` (never the token). */
export interface TokenRefusal {
  refused: string;
}

/**
 * Verifies tokens minted elsewhere (an authorization server's JWTs, introspection): a principal, or a
 * refusal. When it cannot tell (the authorization server is out of reach), it throws `auth-unavailable`.
 */
export interface TokenVerifier {
  verify(token: string): Promise<Principal | TokenRefusal>;
}

export type Authenticated = { principal: Principal } | { missing: true } | TokenRefusal;

export interface AuthenticationOptions {
  /** `--token-file` and `--access` principals. */
  statics?: StaticPrincipals;
  /** `--oauth-issuer`'s tokens. */
  verifier?: TokenVerifier;
  /**
   * `--resource`'s metadata URL, for `WWW-Authenticate`'s `resource_metadata` (RFC 9728 §5.1): what an
   * MCP client follows from a 401 to find the authorization server.
   */
  resourceMetadata?: string;
}

/** The credentials of an `Authorization` header: the scheme is case-insensitive, then one or more spaces (RFC 9110 §11.1, RFC 6750 §2.1). */
export function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const credentials = /^bearer +(.*)$/is.exec(header);
  const token = credentials?.[1]?.trim();
  return token === undefined || token === '' ? undefined : token;
}

export class Authentication {
  readonly statics?: StaticPrincipals;
  readonly verifier?: TokenVerifier;
  readonly resourceMetadata?: string;

  constructor(options: AuthenticationOptions = {}) {
    this.statics = options.statics;
    this.verifier = options.verifier;
    this.resourceMetadata = options.resourceMetadata;
  }

  /** Whether requests must carry a token. */
  get required(): boolean {
    return this.statics !== undefined || this.verifier !== undefined;
  }

  /** The principal of a request with this `Authorization` header. */
  async authenticate(header: string | undefined): Promise<Authenticated> {
    if (!this.required) return { principal: ANONYMOUS };
    const token = bearerOf(header);
    if (token === undefined) return { missing: true };
    const found = this.statics?.find(token);
    if (found !== undefined) return { principal: found };
    if (this.verifier === undefined) return { refused: 'the token is not one this bermd holds' };
    const verified = await this.verifier.verify(token);
    return 'refused' in verified ? verified : { principal: verified };
  }

  /**
   * `WWW-Authenticate` for a 401 (`refused` when a token was given) or a 403 (`scope` missing), as
   * RFC 6750 §3 and RFC 9728 §5.1 word it.
   */
  challenge(refusal: { refused?: string; scope?: string }): string {
    const params: string[] = [];
    if (this.resourceMetadata !== undefined) params.push(`resource_metadata="${this.resourceMetadata}"`);
    if (refusal.scope !== undefined) params.push('error="insufficient_scope"', `scope="${refusal.scope}"`);
    else if (refusal.refused !== undefined) params.push('error="invalid_token"', `error_description="${quoted(refusal.refused)}"`);
    return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
  }
}

/** Text inside a quoted-string: no quote or backslash, printable ASCII only. */
function quoted(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
}
