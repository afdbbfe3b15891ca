/**
 * Admission: everything that decides whether an image may run under a name, and with what. A deploy and
 * a restore go through the same sequence (limits, the image checks, the declared host patterns, grants);
 * they differ only in where the bindings come from and in what a limit above the daemon's gets (a deploy
 * is refused, a restore is clamped, since the daemon may have been restarted with lower limits).
 */
import { OUTBOUND_SYSCALLS, reachesOutside, undeclaredEffects, type Manifest } from '@berm/manifest';
import type { GrantSet, LimitBindings, Limits } from '@berm/protocol';
import { BermdError } from '../errors.js';
import {
  checkLimits,
  declaredGrants,
  effectiveGrants,
  effectiveLimits,
  grantsFromSpecs,
  hostPatternProblems,
  limitsOf,
  type Bindings,
  type GrantSpec,
} from './bindings.js';
import { checkImage, type CheckPolicy } from './checks.js';
import { refuseUnreadableReconcile } from './reconcile-answer.js';

/** What `DeployHooks.prepare` sees: an image that passed every deploy check. */
export interface CheckedHarness {
  bytes: Uint8Array;
  digest: string;
  manifest: Manifest;
  module: WebAssembly.Module;
  /** The limits its calls run under (the module is already compiled with its memory cap). */
  limits: Limits;
  /** What it is granted, and what it declares (a grant narrows a declaration). */
  grants: GrantSet;
  declared: GrantSet;
}

export interface AdmissionRequest {
  limits: LimitBindings;
  /** Grants as a deploy gives them, read against the image. */
  grantSpecs?: readonly GrantSpec[];
  /** Grants as stored with the image when it was deployed. */
  grants?: GrantSet;
}

export interface AdmissionPolicy {
  checks: CheckPolicy;
  /** The daemon's limits: the defaults, and the upper bounds of every harness's. */
  bounds: Limits;
  /** `--require-effects`: a deploy of an image that reaches outside must declare the effect of every tool that is not a query. */
  requireEffects?: boolean;
}

export interface Admitted {
  harness: CheckedHarness;
  /** What the operator set, as kept with the harness. */
  bindings: Bindings;
  /** The limits a restore lowered to the daemon's. */
  clamped: string[];
}

/** Refuses (422 `bad-host-pattern`) an image declaring hosts that are not host patterns. */
function refuseBadHostPatterns(manifest: Manifest): void {
  const problems = hostPatternProblems(manifest);
  if (problems.length === 0) return;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  throw new BermdError('bad-host-pattern', `the image declares a host that is not a host pattern: ${problems[0]!.message}${more}`, {
    problems,
  });
}

/** Refuses (422 `effect-undeclared`) an image that reaches outside with tools whose effect callers cannot know. */
function refuseUndeclaredEffects(manifest: Manifest): void {
  if (!reachesOutside(manifest.data)) return;
  const tools = undeclaredEffects(manifest.data);
  if (tools.length === 0) return;
  const syscalls = OUTBOUND_SYSCALLS.filter((s) => Object.hasOwn(manifest.data.deps.syscalls, s));
  const names = tools.map((t) => `"${t}"`).join(', ');
  throw new BermdError(
    'effect-undeclared',
    `this bermd requires effect contracts (--require-effects), and the image declares ${syscalls.join(' and ')} while tool${tools.length > 1 ? 's' : ''} ${names} declare${tools.length > 1 ? '' : 's'} no effect; declare each one's effect in the manifest ({"kind": "none"} or {"kind": "external_write", "retry": ...}; in AssemblyScript the @effect and @retry doc tags) or mark it a query`,
    { tools, syscalls },
  );
}

/** Checks `bytes` with the bindings asked for; throws the `BermdError` that refuses it. */
export async function admit(
  bytes: Uint8Array,
  request: AdmissionRequest,
  policy: AdmissionPolicy,
  mode: 'deploy' | 'restore',
): Promise<Admitted> {
  if (mode === 'deploy') checkLimits(request.limits, policy.bounds);
  const bindings: Bindings = limitsOf(request.limits);
  const { limits, clamped } = effectiveLimits(bindings, policy.bounds);
  const checked = await checkImage(bytes, policy.checks, { maxMemoryBytes: limits.max_memory });
  refuseBadHostPatterns(checked.manifest);
  // A restore keeps serving what was admitted before the operator asked for effects: refusing it
  // would take tools away from callers on a restart, not at a deploy anyone is watching.
  if (mode === 'deploy' && policy.requireEffects === true) refuseUndeclaredEffects(checked.manifest);
  // At a deploy only, as above: an image admitted before this check keeps being served.
  if (mode === 'deploy') refuseUnreadableReconcile(checked.manifest);
  if (request.grantSpecs !== undefined) bindings.grants = grantsFromSpecs(request.grantSpecs, checked.manifest);
  else if (request.grants !== undefined) bindings.grants = request.grants;
  const grants = effectiveGrants(bindings, checked.manifest);
  const declared = declaredGrants(checked.manifest);
  return { harness: { ...checked, bytes, limits, grants, declared }, bindings, clamped };
}
