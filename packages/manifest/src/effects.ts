import { canonical } from './breaks/json.js';
import { ManifestError, type ManifestErrorCode } from './errors.js';
import type { Effect, ManifestData, ToolSpec } from './types.js';

/**
 * A tool's effect as callers may rely on it: the one it declares, `none` for an undeclared query
 * (a query changes nothing, so it writes nothing outside either), `undefined` when nothing is promised.
 */
export function effectOf(tool: ToolSpec): Effect | undefined {
  // breaks() also takes manifests that were never validated; a malformed effect promises nothing.
  if (typeof tool.effect === 'object' && tool.effect !== null) return tool.effect;
  return tool.query === true ? { kind: 'none' } : undefined;
}

/** The syscalls through which a program reaches outside the machine; a program declaring one may write there. */
export const OUTBOUND_SYSCALLS: readonly string[] = ['berm.http.fetch', 'berm.http.proxy'];

/** Whether the manifest declares a syscall that leaves the machine (`OUTBOUND_SYSCALLS`). */
export function reachesOutside(data: ManifestData): boolean {
  return OUTBOUND_SYSCALLS.some((name) => Object.hasOwn(data.deps.syscalls, name));
}

/** The tools a caller cannot know the effect of: not queries, no `effect` declared. */
export function undeclaredEffects(data: ManifestData): string[] {
  return data.tools.filter((t) => effectOf(t) === undefined).map((t) => t.name);
}

/**
 * The checks of the tools' effects that JSON Schema cannot express, over a manifest the schema
 * accepted: what a reference names exists and fits its role, and a query declares no write.
 * The first problem found is thrown, located at the member to fix.
 */
export function checkEffects(data: ManifestData): void {
  const tools = new Map(data.tools.map((t, index) => [t.name, { tool: t, index }]));
  data.tools.forEach((tool, index) => {
    const effect = tool.effect;
    if (effect === undefined) return;
    const at = `/tools/${index}/effect`;
    const fail = (code: ManifestErrorCode, path: string, problem: string): never => {
      throw new ManifestError(code, `invalid manifest at ${path}: ${problem}`, { path });
    };
    if (effect.kind === 'none') {
      for (const member of ['retry', 'reconcile', 'compensation'] as const) {
        if (Object.hasOwn(effect, member)) {
          fail(
            'invalid-manifest',
            `${at}/${member}`,
            `tool "${tool.name}" declares effect kind "none" with a ${member}, which only an "external_write" has; remove ${member} or declare kind "external_write"`,
          );
        }
      }
      return;
    }
    if (effect.retry === undefined) {
      fail(
        'invalid-manifest',
        `${at}/retry`,
        `tool "${tool.name}" declares effect kind "external_write" without a retry mode; add "retry": "idempotency_key", "reconcile" or "none"`,
      );
    }
    if (tool.query === true) {
      fail(
        'effect-on-query',
        `${at}/kind`,
        `tool "${tool.name}" is a query ("query": true) and declares effect kind "external_write"; a query writes nothing: declare {"kind": "none"} or drop "query"`,
      );
    }
    if (effect.retry === 'reconcile' && effect.reconcile === undefined) {
      fail(
        'effect-reconcile-missing',
        `${at}/reconcile`,
        `tool "${tool.name}" declares retry "reconcile" without naming the query that reconciles it; add "reconcile": "TOOL" (a query tool taking the same arguments) or choose another retry mode`,
      );
    }
    for (const member of ['reconcile', 'compensation'] as const) {
      const name = effect[member];
      if (name !== undefined && !tools.has(name)) {
        fail(
          'effect-unknown-tool',
          `${at}/${member}`,
          `tool "${tool.name}" names ${member} tool "${name}", which this program does not declare; name one of its tools (${[...tools.keys()].map((n) => `"${n}"`).join(', ')})`,
        );
      }
    }
    if (effect.reconcile === undefined) return;
    const reconciler = tools.get(effect.reconcile)!.tool;
    if (reconciler.query !== true) {
      fail(
        'effect-reconcile-not-query',
        `${at}/reconcile`,
        `tool "${tool.name}" names reconcile tool "${reconciler.name}", which is not a query; reconciling must change nothing: mark "${reconciler.name}" "query": true or name a query tool`,
      );
    }
    if (canonical(reconciler.arguments) !== canonical(tool.arguments)) {
      fail(
        'effect-reconcile-arguments',
        `${at}/reconcile`,
        `tool "${tool.name}" names reconcile tool "${reconciler.name}", whose arguments schema differs from its own; the reconcile tool is called with the write's arguments: give both the same arguments schema`,
      );
    }
  });
}
