/**
 * The bounds of the commands' integer flags, in one place for the flags (oclif's `Flags.integer`) and for
 * the fast path's reading (fast-path/values.ts), which must accept exactly the values oclif accepts.
 */
export interface IntegerBounds {
  min?: number;
  max?: number;
}

export const HISTORY_LIMIT: IntegerBounds = { min: 1 };
export const RECEIPTS_LIMIT: IntegerBounds = { min: 1, max: 1000 };
export const ROLLBACK_STEPS: IntegerBounds = { min: 1 };

/** An integer flag's text read as oclif's `Flags.integer` reads it; what it refuses throws (and oclif then says why). */
export function integerReader(bounds: IntegerBounds): (text: string) => number {
  return (text) => {
    if (!/^-?\d+$/.test(text)) throw new Error(`not an integer: ${text}`);
    const value = Number.parseInt(text, 10);
    if ((bounds.min !== undefined && value < bounds.min) || (bounds.max !== undefined && value > bounds.max))
      throw new Error(`out of bounds: ${text}`);
    return value;
  };
}
