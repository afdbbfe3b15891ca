/**
 * What a principal may see and call on `/mcp`: the tools, usage and list changes of the harnesses it may
 * call (`berm:call`, or `berm:call:NAME` for each), and nothing of the others, not even whether they exist.
 *
 * A call of a tool it may not call is refused 403 naming the scope it lacks, so a client can step up. A
 * name that matches no tool is answered the same way whenever its harness part names a harness the
 * principal may not call: `b.tool` refused and `b.tool` unknown look alike to a principal that may not
 * call `b`, and both name `berm:call:b`. Only a name whose every possible harness the principal may call
 * is answered as an unknown tool, as it is to a principal holding `berm:call`.
 *
 * The requests of `/mcp` carry their principal to the SDK's handlers as the SDK's `authInfo` (`req.auth`
 * for a 2025 session's transport, `fetch`'s option for the 2026-07-28 handler), holding no token.
 */
import { callScope } from '@berm/protocol';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Caller } from '../runtime/index.js';
import type { McpRequestTrace } from '../telemetry/index.js';
import type { CatalogTool, ToolCatalog } from './catalog.js';

/** Whether `caller` may call some harness of `harnesses`; a change with no caller (the daemon's own view) concerns everyone. */
export function mayCallSome(caller: Caller | undefined, harnesses: Iterable<string>): boolean {
  if (caller === undefined) return true;
  for (const harness of harnesses) if (caller.mayCall(harness)) return true;
  return false;
}

/** The tool to run; the scopes (space-separated, as `WWW-Authenticate` lists them) the caller lacks; or an unknown name. */
export type CallAccess = { tool: CatalogTool } | { missing: string } | { unknown: true };

const UNKNOWN: CallAccess = { unknown: true };

/**
 * What a `tools/call` of `name` by `caller` gets (see the top of this file). A tool the caller may call
 * costs one map lookup and its scope lookups; only a refusal or an unknown name looks at the name's parts.
 */
export function callAccess(catalog: ToolCatalog, caller: Caller | undefined, name: string): CallAccess {
  const tool = catalog.lookup(name);
  if (tool !== undefined && (caller === undefined || caller.mayCall(tool.harness))) return { tool };
  if (caller === undefined) return UNKNOWN;
  const missing = catalog.harnessesNamedBy(name).filter((harness) => !caller.mayCall(harness));
  return missing.length === 0 ? UNKNOWN : { missing: missing.map(callScope).join(' ') };
}

const CALLER_KEY = 'berm/caller';
const TRACE_KEY = 'berm/trace';
const AUTH_INFO = new WeakMap<Caller, AuthInfo>();

/**
 * `caller` as the SDK carries it to a request's handlers. No token: nothing downstream needs it, so
 * nothing downstream can repeat it. What the caller may call is its own to say (`mayCall`), so `scopes`
 * is left empty rather than listing half of it. Made once per principal.
 */
export function authInfoOf(caller: Caller): AuthInfo {
  let info = AUTH_INFO.get(caller);
  if (info === undefined) {
    info = { token: '', clientId: caller.name, scopes: [], extra: { [CALLER_KEY]: caller } };
    AUTH_INFO.set(caller, info);
  }
  return info;
}

/**
 * What the SDK is given of a traced request: its principal, as `authInfoOf` gives it, and its span, so
 * that a handler's tool call makes its spans under the request's (bermd hands contexts on explicitly).
 */
export function tracedAuthInfoOf(caller: Caller, trace: McpRequestTrace | undefined): AuthInfo {
  const info = authInfoOf(caller);
  return trace === undefined ? info : { ...info, extra: { ...info.extra, [TRACE_KEY]: trace } };
}

/** The request's span, as `tracedAuthInfoOf` gave it to the SDK. */
export function traceOf(info: AuthInfo | undefined): McpRequestTrace | undefined {
  return info?.extra?.[TRACE_KEY] as McpRequestTrace | undefined;
}

/** The caller `authInfoOf` gave the SDK, as a handler receives it. */
export function callerOf(info: AuthInfo | undefined): Caller | undefined {
  const caller = info?.extra?.[CALLER_KEY];
  return typeof caller === 'object' && caller !== null && typeof (caller as Caller).mayCall === 'function' ? (caller as Caller) : undefined;
}

/** The JSON-RPC code of a refused scope, as of bermd's other refusals on `/mcp` (JSON-RPC's server-error range). */
export const REFUSED_CODE = -32000;

/** Why `principal` may not call `name`, naming the scopes it lacks and what to do. */
export function refusalMessage(principal: string, name: string, missing: string): string {
  const scopes = missing.split(' ');
  const needs = scopes.length === 1 ? `the scope ${scopes[0]}` : `one of the scopes ${scopes.join(', ')}`;
  return `${principal} may not call ${JSON.stringify(name)}: that needs ${needs}, which it does not hold; use a token that holds it`;
}

/** A `tools/call` refused for a scope: its JSON-RPC id (null within a batch), the name called, the scopes lacking. */
export interface CallRefusal {
  id: string | number | null;
  name: string;
  missing: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The first `tools/call` in `body` (one message, or a 2025 batch) that `caller` may not make, if any.
 * A message the SDK would refuse anyway (no name) is left to it.
 */
export function refusedCall(catalog: ToolCatalog, caller: Caller, body: unknown): CallRefusal | undefined {
  if (!Array.isArray(body)) return refusedOne(catalog, caller, body);
  for (const message of body) {
    const refusal = refusedOne(catalog, caller, message);
    // One refusal answers the whole batch, so nothing in it runs; no one id stands for it.
    if (refusal !== undefined) return { ...refusal, id: null };
  }
  return undefined;
}

function refusedOne(catalog: ToolCatalog, caller: Caller, message: unknown): CallRefusal | undefined {
  if (!isObject(message) || message.method !== 'tools/call' || !isObject(message.params)) return undefined;
  const { name } = message.params;
  if (typeof name !== 'string') return undefined;
  const access = callAccess(catalog, caller, name);
  if (!('missing' in access)) return undefined;
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  return { id, name, missing: access.missing };
}
