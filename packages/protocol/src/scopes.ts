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

/**
 * A principal: a name and the scopes it holds, as bermd checks them on every request and as the page
 * reads them from `GET /whoami` to offer only what it may do.
 */
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
    return this.scopes.has(SCOPE.call) || this.scopes.has(callScope(harness));
  }

  /** Whether it may call every harness's tools: a list shown to it needs no filtering. */
  mayCallEvery(): boolean {
    return this.scopes.has(SCOPE.call);
  }

  /** Whether it may call some harness's tools: what `/mcp` asks of it at the door. */
  mayCallAny(): boolean {
    if (this.scopes.has(SCOPE.call)) return true;
    for (const scope of this.scopes) if (harnessOfCallScope(scope) !== undefined) return true;
    return false;
  }
}
