/**
 * The principals bermd makes itself. A principal (`@berm/protocol`'s) is who made a request, a name and
 * the scopes it holds. Every request has one: the token's, or, when bermd asks for no token (loopback
 * without auth), `anonymous`, holding every scope.
 */
import { Principal, SCOPES } from '@berm/protocol';

export { Principal };

/** Whoever reaches a bermd that asks for no token: it may do everything, as before principals. */
export const ANONYMOUS = new Principal('anonymous', SCOPES);

/** The name of the principal `--token-file`'s token makes. */
export const OPERATOR_NAME = 'operator';

/** `--token-file`'s principal: every scope. */
export const OPERATOR = new Principal(OPERATOR_NAME, SCOPES);
