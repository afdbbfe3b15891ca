/**
 * The live figures' duration histogram: fixed bins spaced by a quarter of a doubling from the lowest edge, so a
 * histogram is a plain array of counts, histograms of different seconds add bin by bin, and recording a
 * duration is one logarithm and one increment. A percentile is the nearest-rank bin's geometric middle:
 * a duration of that bin is within a factor 2^(1/8) of it, which is the error the page states. Below the
 * first edge is one bin; past the last another, whose estimate is that edge.
 */

/** The lowest edge, in milliseconds: shorter durations share the first bin. */
const LOWEST_MS = 0.01;
/** Bins per doubling. */
const PER_DOUBLING = 4;
/** Doublings covered above the lowest edge. */
const DOUBLINGS = 25;

/** How many bins a histogram holds: one below the lowest edge, one past the last, and those between. */
export const DURATION_BINS = DOUBLINGS * PER_DOUBLING + 2;

/** The largest relative error of a percentile estimate, for a duration at or above the lowest edge. */
export const PERCENTILE_ERROR = 2 ** (1 / (2 * PER_DOUBLING)) - 1;

/** The bin of a duration of `ms` milliseconds. */
export function binOf(ms: number): number {
  if (!(ms >= LOWEST_MS)) return 0;
  const bin = 1 + Math.floor(Math.log2(ms / LOWEST_MS) * PER_DOUBLING);
  return bin < DURATION_BINS ? bin : DURATION_BINS - 1;
}

/** What a bin stands for: its geometric middle (the lowest edge for the first bin, the last edge for the last). */
export function estimateOf(bin: number): number {
  if (bin <= 0) return LOWEST_MS;
  if (bin >= DURATION_BINS - 1) return LOWEST_MS * 2 ** DOUBLINGS;
  return LOWEST_MS * 2 ** ((bin - 0.5) / PER_DOUBLING);
}

/**
 * The `q` quantile (0 < q <= 1) of the durations counted in `bins[offset .. offset + DURATION_BINS)`, by
 * nearest rank; undefined when they count none.
 */
export function quantileOf(bins: ArrayLike<number>, q: number, offset = 0): number | undefined {
  let total = 0;
  for (let i = 0; i < DURATION_BINS; i++) total += bins[offset + i]!;
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < DURATION_BINS; i++) {
    seen += bins[offset + i]!;
    if (seen >= rank) return estimateOf(i);
  }
  return estimateOf(DURATION_BINS - 1);
}
