/**
 * The delays of a doubling retry: the first, twice that, and so on up to a cap.
 *
 * Not wire contract: it lives here because bermd (the PostgreSQL store's wait at start and its listening
 * connection's reconnection) and the CLI (`berm mcp` reaching bermd again) retry alike, and this package
 * is the one both import that imports nothing at run time. A pure function of its arguments, so it adds
 * no state and no import to the package.
 */

/** A doubling retry: the first delay, and the longest, in milliseconds. */
export interface Backoff {
  firstMs: number;
  maxMs: number;
}

/**
 * The delay before retry `attempt` (0 for the first): `firstMs` doubled `attempt` times, at most `maxMs`.
 * With `leftMs`, the time until a deadline: at most that, and null once nothing is left (time to give up).
 */
export function backoff(attempt: number, policy: Backoff): number;
export function backoff(attempt: number, policy: Backoff, leftMs: number): number | null;
export function backoff(attempt: number, { firstMs, maxMs }: Backoff, leftMs?: number): number | null {
  // 2^1023 is the largest finite power of two: past it the product would be Infinity, or NaN with a first delay of 0.
  const delay = Math.min(firstMs * 2 ** Math.min(Math.max(attempt, 0), 1023), maxMs);
  if (leftMs === undefined) return delay;
  return leftMs > 0 ? Math.min(delay, leftMs) : null;
}
