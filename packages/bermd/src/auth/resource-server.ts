/**
 * bermd as an OAuth 2.1 resource server (`--oauth-issuer`, `--resource`): the token verifier the
 * authentication asks about every token that is not a static one. It finds the authorization server's
 * metadata at start (discovery.ts), then verifies JWTs against its keys (jwt-verifier.ts) and, given
 * `--oauth-introspection-client`, asks about opaque tokens (introspection.ts).
 *
 * An authorization server out of reach does not stop bermd: it starts, serves what static tokens allow,
 * and answers a request carrying any other token 503 `auth-unavailable` (a client tries again later and
 * keeps its token, where a 401 would send it to fetch another) while it tries again in the background,
 * doubling its delay, and at once when a token comes after the first retry's delay has passed.
 */
import { backoff } from '@berm/protocol';
import type { Logger } from 'pino';
import { BermdError } from '../errors.js';
import type { TokenRefusal, TokenVerifier } from './authentication.js';
import { type AuthorizationServerMetadata, discover } from './discovery.js';
import { Introspection, type IntrospectionClient } from './introspection.js';
import { JwtVerifier, looksLikeJwt } from './jwt-verifier.js';
import type { Principal } from './principal.js';

/** The delays between discovery attempts: a second, doubling to half a minute. */
export const DISCOVERY_RETRY = { firstMs: 1000, maxMs: 30_000 } as const;

/** What begins every token `bermd token new` makes (access-file.ts). */
const STATIC_TOKEN_PREFIX = 'berm_';

export interface ResourceServerOptions {
  /** `--oauth-issuer`, exactly as the authorization server names itself. */
  issuer: string;
  /** `--resource`: this bermd's canonical URI, what every token's audience must include. */
  resource: string;
  /** `--oauth-introspection-client`'s credentials: opaque tokens are introspected with them. */
  introspectionClient?: IntrospectionClient;
  /** `--oauth-clock-skew`, in seconds. */
  clockSkewSeconds?: number;
  logger: Logger;
}

interface Ready {
  metadata: AuthorizationServerMetadata;
  jwt?: JwtVerifier;
  introspection?: Introspection;
}

export class ResourceServer implements TokenVerifier {
  private ready?: Ready;
  private attempt?: Promise<void>;
  private failures = 0;
  private lastFailure = '';
  private lastTry = 0;
  private retry?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: ResourceServerOptions) {}

  get issuer(): string {
    return this.options.issuer;
  }

  get resource(): string {
    return this.options.resource;
  }

  /** The first discovery attempt: resolves once it has succeeded or failed (and a retry is set). */
  start(): Promise<void> {
    return this.tryDiscover();
  }

  async verify(token: string): Promise<Principal | TokenRefusal> {
    // bermd's own static tokens (`newToken`) are never sent to the authorization server, not even one
    // the access file no longer holds.
    if (token.startsWith(STATIC_TOKEN_PREFIX)) return { refused: 'the token is not one this bermd holds' };
    const ready = this.ready;
    if (ready === undefined) {
      if (this.attempt === undefined && Date.now() - this.lastTry >= DISCOVERY_RETRY.firstMs) void this.tryDiscover();
      throw new BermdError(
        'auth-unavailable',
        `bermd has not reached the authorization server ${this.options.issuer} yet, and cannot tell whether the token is good; try again later (${this.lastFailure})`,
        { issuer: this.options.issuer },
      );
    }
    if (looksLikeJwt(token)) {
      if (ready.jwt !== undefined) return ready.jwt.verify(token);
      return { refused: 'the token is a JWT, and the authorization server publishes no key set (jwks_uri) to verify it with' };
    }
    if (ready.introspection !== undefined) return ready.introspection.verify(token);
    return {
      refused:
        this.options.introspectionClient === undefined
          ? 'the token is not a JWT, and bermd has no --oauth-introspection-client to ask the authorization server about it'
          : 'the token is not a JWT, and the authorization server offers no introspection endpoint',
    };
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
  }

  private tryDiscover(): Promise<void> {
    this.attempt ??= this.discoverOnce().finally(() => {
      this.attempt = undefined;
    });
    return this.attempt;
  }

  private async discoverOnce(): Promise<void> {
    const { issuer, resource, introspectionClient, logger } = this.options;
    clearTimeout(this.retry);
    this.lastTry = Date.now();
    let metadata: AuthorizationServerMetadata;
    try {
      metadata = await discover(issuer);
      if (metadata.jwksUri === undefined && introspectionClient === undefined)
        throw new BermdError('auth-unavailable', `the metadata at ${metadata.from} gives no jwks_uri, so no JWT can be verified`);
      if (introspectionClient !== undefined && metadata.introspectionEndpoint === undefined)
        logger.error(
          { issuer, metadata: metadata.from },
          'the authorization server offers no introspection endpoint: opaque tokens are refused (--oauth-introspection-client has no use)',
        );
    } catch (e) {
      if (this.closed) return;
      this.failures += 1;
      this.lastFailure = (e as Error).message;
      const delayMs = backoff(this.failures - 1, DISCOVERY_RETRY);
      logger.warn(
        { issuer, attempt: this.failures, retry_ms: delayMs, reason: this.lastFailure },
        'the authorization server cannot be reached: requests with its tokens are answered 503 auth-unavailable until it is',
      );
      this.retry = setTimeout(() => void this.tryDiscover(), delayMs);
      this.retry.unref();
      return;
    }
    this.ready = {
      metadata,
      jwt:
        metadata.jwksUri === undefined
          ? undefined
          : new JwtVerifier({ issuer, resource, jwksUri: metadata.jwksUri, clockSkewSeconds: this.options.clockSkewSeconds }),
      introspection:
        introspectionClient === undefined || metadata.introspectionEndpoint === undefined
          ? undefined
          : new Introspection({
              issuer,
              resource,
              endpoint: metadata.introspectionEndpoint,
              client: introspectionClient,
              clockSkewSeconds: this.options.clockSkewSeconds,
            }),
    };
    logger.info(
      {
        issuer,
        resource,
        metadata: metadata.from,
        jwks_uri: metadata.jwksUri,
        introspection_endpoint: this.ready.introspection === undefined ? undefined : metadata.introspectionEndpoint,
      },
      'authorization server found: its tokens are verified',
    );
  }
}
