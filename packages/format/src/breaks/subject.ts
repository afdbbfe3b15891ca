import type { Break } from '@berm/manifest';

/** What a break concerns, as a heading: `tool forecast`, `event alert`, or the manifest itself. */
export function subjectOf(item: Break): string {
  if (item.tool !== undefined) return `tool ${item.tool}`;
  if (item.event !== undefined) return `event ${item.event}`;
  if (item.prompt !== undefined) return `prompt ${item.prompt}`;
  if (item.resource !== undefined) return `resource ${item.resource}`;
  return 'manifest';
}

/** `1 breaking change`, `3 breaking changes`. */
export function countBreaks(n: number): string {
  return `${n} breaking change${n === 1 ? '' : 's'}`;
}
