/**
 * A principal: who made a request (a name) and the scopes it holds. Every request has one: the token's,
 * or, when bermd asks for no token (loopback without auth), `anonymous`, holding every scope.
 */
import { SCOPE, SCOPES, scopesMayCall, scopesMayCallAny } from '@berm/protocol';

export class Principal {
  readonly name: string;
  readonly scopes: ReadonlySet<string>;

  constructor(name: string, scopes: Iterable<string>) {
    this.name = name;
    this.scopes = new Set(scopes);
  }

  has(scope: string): boolean {
    return this.scopes.has(scope);
  }

  /** Whether it may list, call and read the usage of `harness`'s tools. */
  mayCall(harness: string): boolean {
    return scopesMayCall(this.scopes, harness);
  }

  /** Whether it may call some harness's tools: what `/mcp` asks of it at the door. */
  mayCallAny(): boolean {
    return scopesMayCallAny(this.scopes);
  }

  /** The scopes it lacks for a deploy (forced or not): none, or the first missing. */
  missingForDeploy(force: boolean): string | undefined {
    if (!this.has(SCOPE.deploy)) return SCOPE.deploy;
    if (force && !this.has(SCOPE.force)) return SCOPE.force;
    return undefined;
  }
}

/** Whoever reaches a bermd that asks for no token: it may do everything, as before principals. */
export const ANONYMOUS = new Principal('anonymous', SCOPES);

/** The name of the principal `--token-file`'s token makes. */
export const OPERATOR_NAME = 'operator';

/** `--token-file`'s principal: every scope. */
export const OPERATOR = new Principal(OPERATOR_NAME, SCOPES);
