/** `GET /whoami`'s answer: a principal's name and scopes, in an order that reads the same on every request. */
import { SCOPES, type WhoAmI } from '@berm/protocol';
import type { Principal } from '../auth/index.js';

/** The fixed scopes in `SCOPES`' order, then any other (`berm:call:NAME`) sorted. */
export function whoAmI(principal: Principal): WhoAmI {
  const fixed = SCOPES.filter((scope) => principal.has(scope));
  const others = [...principal.scopes].filter((scope) => !SCOPES.includes(scope)).sort();
  return { name: principal.name, scopes: [...fixed, ...others] };
}
