import type { BreakCode } from './codes.js';
import { escapePointerToken } from './refs.js';

/** One step into a schema: its pointer text and how a person names it (`.units`, `[]`, `<circle>`). */
export interface Segment {
  readonly pointer: string;
  readonly label: string;
}

/** A break found inside one schema, placed relative to it (so it can be reused at every use site). */
export interface Finding {
  readonly code: BreakCode;
  readonly segments: readonly Segment[];
  /** The predicate of the message: what changed, with both sides. */
  readonly detail: string;
}

export const segment = {
  property: (name: string): Segment => ({ pointer: `/properties/${escapePointerToken(name)}`, label: `.${name}` }),
  /** The values of a map: `tags.*`. */
  additional: { pointer: '/additionalProperties', label: '.*' } as Segment,
  /** The object's catch-all itself, named as the object (what it closes is the object). */
  closure: { pointer: '/additionalProperties', label: '' } as Segment,
  items: { pointer: '/items', label: '[]' } as Segment,
  prefixItem: (index: number): Segment => ({ pointer: `/prefixItems/${index}`, label: `[${index}]` }),
  variant: (keyword: string, label: string): Segment => ({
    pointer: `/${keyword}/${escapePointerToken(label)}`,
    label: `<${label}>`,
  }),
};

export function finding(code: BreakCode, detail: string): Finding {
  return { code, segments: [], detail };
}

export function under(step: Segment | null, found: readonly Finding[]): readonly Finding[] {
  if (step === null || found.length === 0) return found;
  return found.map((f) => ({ ...f, segments: [step, ...f.segments] }));
}

export function pointerOf(segments: readonly Segment[]): string {
  return segments.map((s) => s.pointer).join('');
}

/** How a person names the place: `items[].id`, `shape<circle>.radius`. Empty for the schema's root. */
export function labelOf(segments: readonly Segment[]): string {
  const text = segments.map((s) => s.label).join('');
  return text.startsWith('.') ? text.slice(1) : text;
}
