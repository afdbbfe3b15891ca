/**
 * Operator bindings: what the operator gives one harness at deploy, beside what its image declares.
 * Limits (time, memory, result size, concurrency) and grants (syscalls, the hosts reached through them, secrets).
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
import {
  ABI_HOST_CALLS,
  ASK_SYSCALLS,
  ApiError,
  decodeDeployQuery,
  HARNESS_SETTINGS,
  HTTP_SYSCALLS as HTTP_SYSCALL_NAMES,
  type HarnessSettingRow,
  type Bindings,
  type GrantSet,
  type DeployRequest,
  type DeploySource,
  type LimitBindings,
  type Limits,
  type ParsedQuery,
} from '@berm/protocol';
import { covers, parseHostPattern, parseHostPatterns } from '../egress/index.js';
import { BermdError } from '../errors.js';

export type { Bindings, GrantSet, LimitBindings };

/** The syscalls whose declared strings are host patterns (see egress/hosts.ts). */
export const HTTP_SYSCALLS: ReadonlySet<string> = new Set(HTTP_SYSCALL_NAMES);

export type GrantSpec =
  | { kind: 'none'; text: string }
  | { kind: 'syscall'; syscalls: string[]; text: string }
  | { kind: 'hosts'; syscall: string; hosts: string[]; text: string }
  | { kind: 'secret'; names: string[]; text: string };

/** A deploy's bindings as the request gives them, before they are checked against the image. */
export interface BindingRequest extends LimitBindings {
  grants?: GrantSpec[];
}

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

/**
 * A deploy's query (`@berm/protocol`'s `decodeDeployQuery`) with its grants read: `force`, `dryRun`, and the
 * bindings. Throws `BermdError` 400 (`bad-request`, `bad-limit`, `bad-grant`).
 */
export function readDeployQuery(query: ParsedQuery): { force: boolean; dryRun: boolean; bindings: BindingRequest; source?: DeploySource } {
  let decoded: DeployRequest;
  try {
    decoded = decodeDeployQuery(query);
  } catch (e) {
    throw e instanceof ApiError ? BermdError.from(e) : e;
  }
  const bindings: BindingRequest = { ...decoded.limits };
  if (decoded.grants !== undefined) {
    const specs = decoded.grants.map(parseGrant);
    if (specs.some((s) => s.kind === 'none') && specs.length > 1) {
      throw new BermdError('bad-grant', 'grant none grants nothing and cannot be combined with other grants', { grant: 'none' });
    }
    bindings.grants = specs;
  }
  return { force: decoded.force, dryRun: decoded.dryRun, bindings, ...(decoded.source === undefined ? {} : { source: decoded.source }) };
}

/** The bindings of a deploy request from its query (see `readDeployQuery`). */
export function parseBindingQuery(query: ParsedQuery): BindingRequest {
  return readDeployQuery(query).bindings;
}

/** A limit's value as its messages say it: `10000 ms`, `1048576 bytes`, `4`. */
function limitText(row: HarnessSettingRow, value: number): string {
  return row.kind === 'duration' ? `${value} ms` : row.kind === 'size' ? `${value} bytes` : String(value);
}

/** Refuses (422 `limit-above-daemon`) a harness limit above the daemon's. */
export function checkLimits(request: LimitBindings, bounds: Limits): void {
  const over: string[] = [];
  for (const row of HARNESS_SETTINGS) {
    const name = row.harness.wire;
    const value = request[name];
    if (value !== undefined && value > bounds[name])
      over.push(`${name} ${limitText(row, value)} is above the daemon's ${limitText(row, bounds[name])} (--${row.flag})`);
  }
  if (over.length > 0) {
    throw new BermdError('limit-above-daemon', `a harness's limits may only be lower than the daemon's: ${over.join('; ')}`, {
      limits: over,
    });
  }
}

/** The limits a harness runs with; `clamped` names those its bindings set above the daemon's (only possible on restore). */
export function effectiveLimits(bindings: LimitBindings, bounds: Limits): { limits: Limits; clamped: string[] } {
  const clamped: string[] = [];
  const limits = { ...bounds };
  for (const row of HARNESS_SETTINGS) {
    const name = row.harness.wire;
    const set = bindings[name];
    if (set === undefined) continue;
    if (set > bounds[name]) clamped.push(name);
    else limits[name] = set;
  }
  return { limits, clamped };
}

/** The limits of `from` alone, without its other members. */
export function limitsOf(from: LimitBindings): LimitBindings {
  const out: LimitBindings = {};
  for (const row of HARNESS_SETTINGS) {
    const value = from[row.harness.wire];
    if (value !== undefined) out[row.harness.wire] = value;
  }
  return out;
}

/** The syscalls asking the call's client (`berm.elicit`, `berm.sample`) that `grants` give: what the runtime lets a harness ask. */
export function grantedAsks(grants: GrantSet): string[] {
  return ASK_SYSCALLS.filter((name) => Object.hasOwn(grants.syscalls, name));
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
    for (const message of parseHostPatterns(hosts).problems)
      problems.push({ code: 'bad-host-pattern', message: `${syscall}: ${message}`, syscall });
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
          if (hosts === undefined)
            problems.push({ grant: spec.text, message: `syscall ${syscall} is not declared in the image's deps.syscalls` });
          else
            addUnique(
              (out.syscalls[syscall] ??= []),
              hosts.map((h) => normaliseHost(syscall, h)),
            );
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
          else
            problems.push({
              grant: spec.text,
              message: `host ${host} is not declared under ${spec.syscall} (declared: ${hosts.join(', ') || 'none'})`,
            });
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
    throw new BermdError('grant-not-declared', `a grant may only narrow what the image declares: ${problems[0]!.message}${more}`, {
      problems,
    });
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

export function isDefaultBindings(bindings: Bindings): boolean {
  return Object.keys(bindings).length === 0;
}
