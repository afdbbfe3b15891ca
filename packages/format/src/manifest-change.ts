/**
 * What a new build changes in the manifest a daemon serves under its name: the tools added, removed and
 * changed, each changed tool with the breaks `@berm/manifest` finds in it. `crab dev` prints it before
 * each deploy; the gate's verdict on those breaks is the daemon's, printed after.
 */
import { type Break, breaks, type ManifestData, sameJson, type ToolSpec } from '@berm/manifest';
import type { Paint } from './paint.js';
import { printableDeep } from './printable.js';

export interface ChangedTool {
  name: string;
  /** The breaks of its arguments or result, old callers' view; empty when the change is compatible. */
  breaks: Break[];
}

export interface ManifestChange {
  /** Nothing was served under the name before. */
  first: boolean;
  added: string[];
  removed: string[];
  changed: ChangedTool[];
  /** Breaks of events (removed, or their fields), which no tool name carries. */
  eventBreaks: Break[];
}

function names(tools: readonly ToolSpec[] | undefined): Map<string, ToolSpec> {
  return new Map((tools ?? []).map((t) => [t.name, t]));
}

/** The change from `served` (undefined: nothing served) to `next`. */
export function manifestChange(served: ManifestData | undefined, next: ManifestData): ManifestChange {
  const after = names(next.tools);
  if (served === undefined) return { first: true, added: [...after.keys()], removed: [], changed: [], eventBreaks: [] };
  const before = names(served.tools);
  const found = breaks(served, next);
  const changed: ChangedTool[] = [];
  for (const [name, tool] of after) {
    const old = before.get(name);
    if (old !== undefined && !sameJson(old, tool)) changed.push({ name, breaks: found.filter((b) => b.tool === name) });
  }
  return {
    first: false,
    added: [...after.keys()].filter((n) => !before.has(n)),
    removed: [...before.keys()].filter((n) => !after.has(n)),
    changed,
    eventBreaks: found.filter((b) => b.event !== undefined),
  };
}

/**
 * One line (and one more per break): `tools: added a; removed b; changed c (compatible), d (1 break)`,
 * or `tools: no change` when the build changed only code.
 */
export function renderManifestChange(change: ManifestChange, paint: Paint): string {
  // Tool names and break messages come from the project's code: made printable before they are shown.
  const c = printableDeep(change);
  if (c.first) return `${paint.dim('tools:')} ${c.added.length > 0 ? `new: ${c.added.join(', ')}` : 'none'}`;
  const parts: string[] = [];
  if (c.added.length > 0) parts.push(`${paint.green('added')} ${c.added.join(', ')}`);
  if (c.removed.length > 0) parts.push(`${paint.red('removed')} ${c.removed.join(', ')}`);
  if (c.changed.length > 0) {
    const each = c.changed.map((t) =>
      t.breaks.length === 0
        ? `${t.name} (compatible)`
        : `${t.name} (${paint.yellow(`${t.breaks.length} break${t.breaks.length === 1 ? '' : 's'}`)})`,
    );
    parts.push(`${paint.yellow('changed')} ${each.join(', ')}`);
  }
  const lines = [`${paint.dim('tools:')} ${parts.length > 0 ? parts.join('; ') : 'no change'}`];
  for (const b of [...c.changed.flatMap((t) => t.breaks), ...c.eventBreaks]) lines.push(`  ${paint.dim(b.code)} ${b.message}`);
  return lines.join('\n');
}
