/**
 * Operator bindings: what the operator gives one harness at deploy, beside what its image declares.
 * Limits (time, memory, result size) and grants (syscalls, the hosts reached through them, secrets).
 *
 * The rules, after the design this project follows for bindings: a binding grants explicitly and never
 * more than the image asks for. Without grants, a harness is granted everything it declares (and the
 * daemon serves, which a deploy already requires). With grants, it is granted exactly what they list,
 * each of which must be declared. Without limits, the daemon's apply; a harness's limit may be lower
 * than the daemon's, never higher (a deploy asking for more is refused; a stored harness restored under
 * a daemon whose limit has since been lowered gets the daemon's, and the log says so).
 *
 * Grant syntax (the `grant` query parameter of a deploy, `crab deploy --grant`), one per parameter:
 * - `syscall=berm.http.fetch` — that syscall, with every host the image declares under it;
 * - `berm.http.fetch=api.example.com` — that syscall, with those hosts only (comma-separated); each
 *   must be a declared pattern or narrower (`api.example.com` under a declared `*.example.com`);
 * - `secret=example` — those secrets (comma-separated);
 * - `none` — nothing at all (alone).
 */
import type { Manifest } from '@berm/manifest';
import { ABI_HOST_CALLS } from './checks.js';
import { covers, parseHostPattern, parseHostPatterns, type HostPattern } from './egress/hosts.js';
import { SERVABLE_SYSCALLS } from './egress/syscalls.js';
import { BermdError } from './errors.js';
import { OptionsError, parseDuration, parseSize } from './options.js';

/** The syscalls whose declared strings are host patterns (see egress/hosts.ts). */
export const HTTP_SYSCALLS: ReadonlySet<string> = new Set(SERVABLE_SYSCALLS);

/** Syscalls and the hosts granted through each, and secrets. */
export interface GrantSet {
  syscalls: Record<string, string[]>;
  secrets: string[];
}

export interface LimitBindings {
  timeout_ms?: number;
  max_memory_bytes?: number;
  max_result_bytes?: number;
}

/** What the operator set for a harness, as stored with it and shown by the API; absent members are the defaults. */
export interface Bindings extends LimitBindings {
  /** Absent: everything declared is granted. */
  grants?: GrantSet;
}

export interface EffectiveLimits {
  timeout_ms: number;
  max_memory_bytes: number;
  max_result_bytes: number;
}

/** The daemon's own limits: the defaults, and the upper bounds of every harness's. */
export interface DaemonBounds {
  timeoutMs: number;
  maxMemoryBytes: number;
  maxResultBytes: number;
}

export type GrantSpec =
  | { kind: 'none'; text: string }
  | { kind: 'syscall'; syscalls: string[]; text: string }
  | { kind: 'hosts'; syscall: string; hosts: string[]; text: string }
  | { kind: 'secret'; names: string[]; text: string };

/** A deploy's bindings as the request gives them, before they are checked against the image. */
export interface BindingRequest extends LimitBindings {
  grants?: GrantSpec[];
}

/** The deploy query parameters that carry bindings (besides `force`). */
export const BINDING_PARAMS = ['timeout', 'max_memory', 'max_result_size', 'grant'] as const;

const SYSCALL_NAME = /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)+$/;

function list(value: string): string[] {
  return value.split(',').map((s) => s.trim());
}

function badGrant(text: string, why: string): BermdError {
  return new BermdError('bad-grant', `grant ${JSON.stringify(text)}: ${why}`, { grant: text });
}

/** One `grant` value; throws 400 `bad-grant` for what is not a grant in any image's terms. */
export function parseGrant(text: string): GrantSpec {
  const written = text.trim();
  if (written === 'none') return { kind: 'none', text: written };
  const eq = written.indexOf('=');
  if (eq < 0) throw badGrant(text, 'expected syscall=NAME, NAME=HOST[,HOST...], secret=NAME[,NAME...] or none');
  const key = written.slice(0, eq).trim();
  const value = written.slice(eq + 1);
  const items = list(value);
  if (items.some((i) => i === '')) throw badGrant(text, 'an empty item in its list');
  const syscallName = (name: string): string => {
    if (ABI_HOST_CALLS.has(name)) throw badGrant(text, `${name} is one of the ABI's own host calls, which every harness has`);
    if (!SYSCALL_NAME.test(name)) throw badGrant(text, `${JSON.stringify(name)} is not a dotted syscall name`);
    return name;
  };
  if (key === 'syscall') return { kind: 'syscall', syscalls: items.map(syscallName), text: written };
  if (key === 'secret') return { kind: 'secret', names: items, text: written };
  if (!key.includes('.')) throw badGrant(text, `${JSON.stringify(key)} is neither syscall, secret nor a dotted syscall name`);
  const syscall = syscallName(key);
  if (HTTP_SYSCALLS.has(syscall)) {
    for (const host of items) {
      const p = parseHostPattern(host);
      if (typeof p === 'string') throw badGrant(text, p);
    }
  }
  return { kind: 'hosts', syscall, hosts: items, text: written };
}

function one(query: Record<string, unknown>, key: string): string | undefined {
  const value = query[key];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new BermdError('bad-request', `query parameter ${key} is given ${value.length} times; give it once`);
  return String(value);
}

function limitValue<T>(key: string, text: string | undefined, parse: (text: string) => T): T | undefined {
  if (text === undefined) return undefined;
  try {
    return parse(text);
  } catch (e) {
    if (e instanceof OptionsError) throw new BermdError('bad-limit', e.message, { parameter: key });
    throw e;
  }
}

/**
 * The bindings of a deploy request from its query: `timeout` (`500ms`, `10s`, `2m`, bare seconds),
 * `max_memory` and `max_result_size` (bytes, or with K/M/G), `grant` (repeatable). `known` lists the
 * other parameters the route takes; any other is refused, so a misspelt grant never deploys with
 * everything granted.
 */
export function parseBindingQuery(query: Record<string, unknown>, known: readonly string[] = ['force']): BindingRequest {
  for (const key of Object.keys(query)) {
    if (!known.includes(key) && !(BINDING_PARAMS as readonly string[]).includes(key)) {
      throw new BermdError('bad-request', `unknown query parameter ${key}; a deploy takes ${[...known, ...BINDING_PARAMS].join(', ')}`);
    }
  }
  const out: BindingRequest = {};
  const timeout = limitValue('timeout', one(query, 'timeout'), (t) => parseDuration(t, 'timeout'));
  const memory = limitValue('max_memory', one(query, 'max_memory'), (t) => parseSize(t, 'max_memory'));
  const result = limitValue('max_result_size', one(query, 'max_result_size'), (t) => parseSize(t, 'max_result_size'));
  if (memory !== undefined && memory < 65536) throw new BermdError('bad-limit', `max_memory ${memory}: must be at least 64K (one wasm page)`, { parameter: 'max_memory' });
  if (timeout !== undefined) out.timeout_ms = timeout;
  if (memory !== undefined) out.max_memory_bytes = memory;
  if (result !== undefined) out.max_result_bytes = result;
  const grants = query.grant;
  if (grants !== undefined) {
    const texts = (Array.isArray(grants) ? grants : [grants]).map(String);
    const specs = texts.map(parseGrant);
    if (specs.some((s) => s.kind === 'none') && specs.length > 1) {
      throw new BermdError('bad-grant', 'grant none grants nothing and cannot be combined with other grants', { grant: 'none' });
    }
    out.grants = specs;
  }
  return out;
}

/** Refuses (422 `limit-above-daemon`) a harness limit above the daemon's. */
export function checkLimits(request: LimitBindings, bounds: DaemonBounds): void {
  const over: string[] = [];
  if (request.timeout_ms !== undefined && request.timeout_ms > bounds.timeoutMs) over.push(`timeout ${request.timeout_ms} ms is above the daemon's ${bounds.timeoutMs} ms (--call-timeout)`);
  if (request.max_memory_bytes !== undefined && request.max_memory_bytes > bounds.maxMemoryBytes) {
    over.push(`max_memory ${request.max_memory_bytes} bytes is above the daemon's ${bounds.maxMemoryBytes} (--max-memory)`);
  }
  if (request.max_result_bytes !== undefined && request.max_result_bytes > bounds.maxResultBytes) {
    over.push(`max_result_size ${request.max_result_bytes} bytes is above the daemon's ${bounds.maxResultBytes} (--max-result-size)`);
  }
  if (over.length > 0) {
    throw new BermdError('limit-above-daemon', `a harness's limits may only be lower than the daemon's: ${over.join('; ')}`, { limits: over });
  }
}

/** The limits a harness runs with; `clamped` names those its bindings set above the daemon's (only possible on restore). */
export function effectiveLimits(bindings: LimitBindings, bounds: DaemonBounds): { limits: EffectiveLimits; clamped: string[] } {
  const clamped: string[] = [];
  const pick = (set: number | undefined, bound: number, label: string): number => {
    if (set === undefined) return bound;
    if (set > bound) {
      clamped.push(label);
      return bound;
    }
    return set;
  };
  return {
    limits: {
      timeout_ms: pick(bindings.timeout_ms, bounds.timeoutMs, 'timeout'),
      max_memory_bytes: pick(bindings.max_memory_bytes, bounds.maxMemoryBytes, 'max_memory'),
      max_result_bytes: pick(bindings.max_result_bytes, bounds.maxResultBytes, 'max_result_size'),
    },
    clamped,
  };
}

/** Everything an image declares beyond the ABI: what a harness without grants is granted. */
export function declaredGrants(manifest: Manifest): GrantSet {
  const { syscalls, secrets } = manifest.data.deps;
  const out: GrantSet = { syscalls: {}, secrets: [...secrets] };
  for (const [name, hosts] of Object.entries(syscalls)) {
    if (!ABI_HOST_CALLS.has(name)) out.syscalls[name] = [...hosts];
  }
  return out;
}

/** Declared host patterns of the HTTP syscalls that are not patterns: a deploy refuses them (422 `bad-host-pattern`). */
export function hostPatternProblems(manifest: Manifest): Array<{ code: 'bad-host-pattern'; message: string; syscall: string }> {
  const problems: Array<{ code: 'bad-host-pattern'; message: string; syscall: string }> = [];
  for (const [syscall, hosts] of Object.entries(manifest.data.deps.syscalls)) {
    if (!HTTP_SYSCALLS.has(syscall)) continue;
    for (const message of parseHostPatterns(hosts).problems) problems.push({ code: 'bad-host-pattern', message: `${syscall}: ${message}`, syscall });
  }
  return problems;
}

function coveredBy(syscall: string, host: string, declared: readonly string[]): boolean {
  if (!HTTP_SYSCALLS.has(syscall)) return declared.includes(host);
  const inner = parseHostPattern(host);
  if (typeof inner === 'string') return false;
  return declared.some((d) => {
    const outer = parseHostPattern(d);
    return typeof outer !== 'string' && covers(outer, inner);
  });
}

function normaliseHost(syscall: string, host: string): string {
  if (!HTTP_SYSCALLS.has(syscall)) return host;
  const p = parseHostPattern(host);
  return typeof p === 'string' ? host : p.text;
}

function addUnique(into: string[], items: Iterable<string>): void {
  for (const item of items) if (!into.includes(item)) into.push(item);
}

/**
 * The grant set `specs` give a harness of `manifest`. Throws 422 `grant-not-declared` listing every
 * grant of something the image does not declare.
 */
export function grantsFromSpecs(specs: readonly GrantSpec[], manifest: Manifest): GrantSet {
  const declared = declaredGrants(manifest);
  const out: GrantSet = { syscalls: {}, secrets: [] };
  const problems: Array<{ grant: string; message: string }> = [];
  for (const spec of specs) {
    switch (spec.kind) {
      case 'none':
        break;
      case 'syscall':
        for (const syscall of spec.syscalls) {
          const hosts = declared.syscalls[syscall];
          if (hosts === undefined) problems.push({ grant: spec.text, message: `syscall ${syscall} is not declared in the image's deps.syscalls` });
          else addUnique((out.syscalls[syscall] ??= []), hosts.map((h) => normaliseHost(syscall, h)));
        }
        break;
      case 'hosts': {
        const hosts = declared.syscalls[spec.syscall];
        if (hosts === undefined) {
          problems.push({ grant: spec.text, message: `syscall ${spec.syscall} is not declared in the image's deps.syscalls` });
          break;
        }
        const granted = (out.syscalls[spec.syscall] ??= []);
        for (const host of spec.hosts) {
          if (coveredBy(spec.syscall, host, hosts)) addUnique(granted, [normaliseHost(spec.syscall, host)]);
          else problems.push({ grant: spec.text, message: `host ${host} is not declared under ${spec.syscall} (declared: ${hosts.join(', ') || 'none'})` });
        }
        break;
      }
      case 'secret':
        for (const name of spec.names) {
          if (declared.secrets.includes(name)) addUnique(out.secrets, [name]);
          else problems.push({ grant: spec.text, message: `secret ${name} is not declared in the image's deps.secrets` });
        }
        break;
    }
  }
  if (problems.length > 0) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    throw new BermdError('grant-not-declared', `a grant may only narrow what the image declares: ${problems[0]!.message}${more}`, { problems });
  }
  return out;
}

/** A stored grant set kept to what `manifest` declares (a stored set always is; this guards a hand-edited store). */
export function withinDeclared(grants: GrantSet, manifest: Manifest): GrantSet {
  const declared = declaredGrants(manifest);
  const out: GrantSet = { syscalls: {}, secrets: grants.secrets.filter((s) => declared.secrets.includes(s)) };
  for (const [syscall, hosts] of Object.entries(grants.syscalls)) {
    const allowed = declared.syscalls[syscall];
    if (allowed !== undefined) out.syscalls[syscall] = hosts.filter((h) => coveredBy(syscall, h, allowed));
  }
  return out;
}

/** The grants a harness runs with: its bindings' when set, else everything it declares. */
export function effectiveGrants(bindings: Bindings, manifest: Manifest): GrantSet {
  return bindings.grants === undefined ? declaredGrants(manifest) : withinDeclared(bindings.grants, manifest);
}

/** Reads stored bindings back, keeping only well-formed members (the store is JSON on disk). */
export function readStoredBindings(value: unknown): Bindings | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const out: Bindings = {};
  const count = (key: 'timeout_ms' | 'max_memory_bytes' | 'max_result_bytes'): void => {
    const n = v[key];
    if (typeof n === 'number' && Number.isSafeInteger(n) && n > 0) out[key] = n;
  };
  count('timeout_ms');
  count('max_memory_bytes');
  count('max_result_bytes');
  const g = v.grants as Record<string, unknown> | undefined;
  if (typeof g === 'object' && g !== null) {
    const syscalls: Record<string, string[]> = {};
    if (typeof g.syscalls === 'object' && g.syscalls !== null) {
      for (const [name, hosts] of Object.entries(g.syscalls as Record<string, unknown>)) {
        if (Array.isArray(hosts)) syscalls[name] = hosts.filter((h): h is string => typeof h === 'string');
      }
    }
    const secrets = Array.isArray(g.secrets) ? g.secrets.filter((s): s is string => typeof s === 'string') : [];
    out.grants = { syscalls, secrets };
  }
  return out;
}

export function isDefaultBindings(bindings: Bindings): boolean {
  return Object.keys(bindings).length === 0;
}

/** Parsed host patterns of a grant set's HTTP syscalls, for matching requests. */
export function grantedPatterns(grants: GrantSet): Map<string, HostPattern[]> {
  const out = new Map<string, HostPattern[]>();
  for (const syscall of HTTP_SYSCALLS) {
    const hosts = grants.syscalls[syscall];
    if (hosts !== undefined) out.set(syscall, parseHostPatterns(hosts).patterns);
  }
  return out;
}
