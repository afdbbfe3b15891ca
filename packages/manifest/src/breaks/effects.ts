import { effectOf } from '../effects.js';
import type { Effect, EffectRetry, ToolSpec } from '../types.js';
import type { Break } from './codes.js';
import { oneLine } from './describe.js';

/**
 * How much a retry mode lets a caller retry safely, strongest first. A caller who retried because
 * the old mode allowed it may write twice under a weaker one.
 */
const RETRY_STRENGTH: Record<EffectRetry, number> = { idempotency_key: 2, reconcile: 1, none: 0 };

/** An undeclared effect, compared as the weakest promise: it may write outside and a retry may write again. */
const UNDECLARED: Effect = { kind: 'external_write', retry: 'none' };

function describe(effect: Effect | undefined): string {
  if (effect === undefined) return 'undeclared';
  return effect.kind === 'none' ? 'kind none' : `external_write with retry ${effect.retry}`;
}

/**
 * The ways the effect `next` declares breaks a caller of `old`: writing where it wrote nothing
 * (`effect-now-writes`), or a retry mode weaker than old's (`retry-weakened`). A stronger promise, a
 * contract newly declared, and a changed reconcile or compensation tool break nothing. A contract
 * dropped is compared as the weakest one, so dropping `none` writes and dropping a safe retry weakens it.
 */
export function effectBreaks(old: ToolSpec, next: ToolSpec): Break[] {
  const before = effectOf(old);
  if (before === undefined) return [];
  const declared = effectOf(next);
  const after = declared ?? UNDECLARED;
  const owner = { tool: old.name };
  const was = `was ${describe(before)}, now ${describe(declared)}`;
  if (before.kind === 'none') {
    // A query that stops being one without declaring an effect is `tool-no-longer-query` already.
    if (after.kind === 'none' || (declared === undefined && old.effect === undefined)) return [];
    return [
      {
        code: 'effect-now-writes',
        ...owner,
        path: '/effect',
        message: oneLine(`tool \`${old.name}\` may now write outside: a retried call may act twice (${was})`),
      },
    ];
  }
  if (after.kind === 'none' || RETRY_STRENGTH[after.retry] >= RETRY_STRENGTH[before.retry]) return [];
  return [
    {
      code: 'retry-weakened',
      ...owner,
      path: declared === undefined ? '/effect' : '/effect/retry',
      message: oneLine(`tool \`${old.name}\` no longer keeps a retried call from writing as it did (${was})`),
    },
  ];
}
