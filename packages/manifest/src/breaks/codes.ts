/**
 * The stable break codes of the compatibility contract. They are part of the public
 * interface: the CLI prints them, bermd returns them and CI scripts match on them, so a
 * code is never renamed; new ones may only be added.
 */
export const BREAK_CODES = [
  'tool-removed',
  'event-removed',
  'tool-no-longer-query',
  'argument-newly-required',
  'argument-no-longer-accepted',
  'field-no-longer-always-present',
  'type-changed',
  'unsigned-became-signed',
  'argument-range-narrowed',
  'result-range-widened',
  'argument-accepts-fewer-strings',
  'result-writes-more-strings',
  'variant-removed',
  'variant-added',
  'array-constraint-changed',
  'effect-now-writes',
  'retry-weakened',
  'content-removed',
  'prompt-removed',
  'prompt-argument-required',
  'resource-removed',
] as const;

export type BreakCode = (typeof BREAK_CODES)[number];

const KNOWN: ReadonlySet<string> = new Set(BREAK_CODES);

export function isBreakCode(value: unknown): value is BreakCode {
  return typeof value === 'string' && KNOWN.has(value);
}

/** One way `next` breaks a caller of `old`. Exactly one of `tool`, `event`, `prompt` and `resource` is set. */
export interface Break {
  code: BreakCode;
  tool?: string;
  event?: string;
  prompt?: string;
  /** The resource's or template's path, relative to the harness. */
  resource?: string;
  /** JSON-pointer-like place inside the tool or event, e.g. `/arguments/properties/units`; `""` for the whole. */
  path: string;
  /** One line naming the place and both sides. */
  message: string;
}

/**
 * Which way a schema is read across the change.
 * - `reader`: the new program reads what old callers wrote (arguments): next must accept
 *   everything old accepted.
 * - `writer`: old callers read what the new program writes (results, events): next must
 *   write nothing old could not.
 */
export type Side = 'reader' | 'writer';

/** The codes whose name depends on the side: the same loss of compatibility seen from each end. */
export const SIDE_CODES = {
  reader: {
    required: 'argument-newly-required',
    strings: 'argument-accepts-fewer-strings',
    range: 'argument-range-narrowed',
    variant: 'variant-removed',
  },
  writer: {
    required: 'field-no-longer-always-present',
    strings: 'result-writes-more-strings',
    range: 'result-range-widened',
    variant: 'variant-added',
  },
} as const satisfies Record<Side, Record<string, BreakCode>>;

export type BreakCodesOfSide = (typeof SIDE_CODES)[Side];
