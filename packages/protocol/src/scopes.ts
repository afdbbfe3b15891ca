/**
 * Who may do what: the scopes a principal holds, as bermd checks them and as OAuth carries them (the
 * `scope` claim, `scopes_supported`). The page and the CLI read them too, to say what a principal may do.
 */
import { isHarnessName } from './names.js';

export const SCOPE = {
  /** The control API's reads, `GET /events`, the page's views. */
  read: 'berm:read',
  /** Deploy, undeploy, dry runs. */
  deploy: 'berm:deploy',
  /** With `berm:deploy`: a deploy forced past the compatibility gate. */
  force: 'berm:force',
  /** List, call and read the usage of every harness's tools; `berm:call:NAME` is one harness's. */
  call: 'berm:call',
} as const;

/** Every scope with a fixed name, in the order a listing shows them. */
export const SCOPES: readonly string[] = [SCOPE.read, SCOPE.deploy, SCOPE.force, SCOPE.call];

const CALL_PREFIX = `${SCOPE.call}:`;

/** The scope that lets its holder call the tools of `harness` alone. */
export function callScope(harness: string): string {
  return `${CALL_PREFIX}${harness}`;
}

/** The harness a `berm:call:NAME` scope names, or undefined for any other scope. */
export function harnessOfCallScope(scope: string): string | undefined {
  if (!scope.startsWith(CALL_PREFIX)) return undefined;
  const name = scope.slice(CALL_PREFIX.length);
  return isHarnessName(name) ? name : undefined;
}

/** Whether `scope` is one bermd knows: a fixed one, or `berm:call:NAME` with a harness name. */
export function isBermScope(scope: string): boolean {
  return SCOPES.includes(scope) || harnessOfCallScope(scope) !== undefined;
}

/** Whether scopes `held` let their holder call the tools of `harness`. */
export function scopesMayCall(held: ReadonlySet<string>, harness: string): boolean {
  return held.has(SCOPE.call) || held.has(callScope(harness));
}

/** Whether scopes `held` let their holder call the tools of some harness. */
export function scopesMayCallAny(held: ReadonlySet<string>): boolean {
  if (held.has(SCOPE.call)) return true;
  for (const scope of held) if (harnessOfCallScope(scope) !== undefined) return true;
  return false;
}
