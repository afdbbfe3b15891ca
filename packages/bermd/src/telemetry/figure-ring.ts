/**
 * One tool's live figures: calls by outcome and a duration histogram since it was first called, the
 * same in six ten-second slots (the last minute), and calls and failures in sixty one-minute slots
 * (the last hour). Each ring is one typed array allocated with the figures; a call moves the ring to
 * its slot (zeroing the slots it skipped, at most the ring) and increments two or three counts, and
 * allocates nothing. Times are milliseconds of a monotonic clock the caller reads.
 */
import { CALL_ERROR_KINDS, type CallErrorKind, FIGURES_HOUR_POINTS, type FigureWindow, type HourSeries } from '@berm/protocol';
import { DURATION_BINS, PERCENTILE_ERROR, binOf, quantileOf } from './duration-bins.js';
import type { CallOutcomeLabel } from './outcomes.js';

export const SLOT_MS = 10_000;
/** Slots in the last minute: the one under way and the five before it. */
export const MINUTE_SLOTS = 6;
export const MINUTE_MS = 60_000;

/** The outcomes in the order the arrays hold them: `ok`, then the protocol's error kinds (each a label bermd gives a call). */
const OUTCOMES = ['ok', ...CALL_ERROR_KINDS] as const satisfies readonly CallOutcomeLabel[];
const OUTCOME_INDEX = Object.fromEntries(OUTCOMES.map((o, i) => [o, i])) as Record<CallOutcomeLabel, number | undefined>;

/** Counts of one span: calls by outcome, then the histogram of the durations of those that ran. */
const STRIDE = OUTCOMES.length + DURATION_BINS;
const HOUR_STRIDE = 2;

/** The bytes one tool's figures hold in their arrays: what docs/decisions.md states. */
export const FIGURE_BYTES = STRIDE * 8 + MINUTE_SLOTS * STRIDE * 4 + FIGURES_HOUR_POINTS * HOUR_STRIDE * 4;

export class FigureRing {
  private readonly total = new Float64Array(STRIDE);
  private readonly recent = new Uint32Array(MINUTE_SLOTS * STRIDE);
  private readonly hour = new Uint32Array(FIGURES_HOUR_POINTS * HOUR_STRIDE);
  /** The ten-second slot and the minute the rings were last moved to. */
  private slot: number;
  private minute: number;

  constructor(now: number) {
    this.slot = Math.floor(now / SLOT_MS);
    this.minute = Math.floor(now / MINUTE_MS);
  }

  /** A call ended at `now` with `outcome`, after `ms` milliseconds waiting and running (undefined: it never got a worker). */
  record(now: number, outcome: CallOutcomeLabel, ms: number | undefined): void {
    this.advance(now);
    const o = OUTCOME_INDEX[outcome] ?? OUTCOME_INDEX.error!;
    const at = (this.slot % MINUTE_SLOTS) * STRIDE;
    this.total[o]!++;
    this.recent[at + o]!++;
    const h = (this.minute % FIGURES_HOUR_POINTS) * HOUR_STRIDE;
    this.hour[h]!++;
    if (o !== 0) this.hour[h + 1]!++;
    if (ms !== undefined) {
      const b = OUTCOMES.length + binOf(ms);
      this.total[b]!++;
      this.recent[at + b]!++;
    }
  }

  sinceStart(): FigureWindow {
    return windowOf(this.total);
  }

  lastMinute(now: number): FigureWindow {
    this.advance(now);
    const sum = new Float64Array(STRIDE);
    for (let s = 0; s < MINUTE_SLOTS; s++) for (let i = 0; i < STRIDE; i++) sum[i]! += this.recent[s * STRIDE + i]!;
    return windowOf(sum);
  }

  /** Calls and failures per minute over the hour, oldest first, added to `into` (a harness sums its tools). */
  addLastHour(now: number, into: HourSeries): void {
    this.advance(now);
    for (let p = 0; p < FIGURES_HOUR_POINTS; p++) {
      // The point p minutes before the last, the minute under way.
      const minute = this.minute - (FIGURES_HOUR_POINTS - 1 - p);
      const at = (((minute % FIGURES_HOUR_POINTS) + FIGURES_HOUR_POINTS) % FIGURES_HOUR_POINTS) * HOUR_STRIDE;
      into.calls[p]! += this.hour[at]!;
      into.errors[p]! += this.hour[at + 1]!;
    }
  }

  /** Moves both rings to `now`, zeroing the slots passed since the last move; a clock gone back moves nothing. */
  private advance(now: number): void {
    const slot = Math.floor(now / SLOT_MS);
    if (slot > this.slot) {
      const passed = Math.min(slot - this.slot, MINUTE_SLOTS);
      for (let s = slot - passed + 1; s <= slot; s++)
        this.recent.fill(0, (s % MINUTE_SLOTS) * STRIDE, (s % MINUTE_SLOTS) * STRIDE + STRIDE);
      this.slot = slot;
    }
    const minute = Math.floor(now / MINUTE_MS);
    if (minute > this.minute) {
      const passed = Math.min(minute - this.minute, FIGURES_HOUR_POINTS);
      for (let m = minute - passed + 1; m <= minute; m++) {
        const at = (m % FIGURES_HOUR_POINTS) * HOUR_STRIDE;
        this.hour.fill(0, at, at + HOUR_STRIDE);
      }
      this.minute = minute;
    }
  }
}

/** The largest relative error of a percentile answered: the bins' and the rounding's, rounded up to a thousandth. */
export const FIGURES_ERROR = Math.ceil(((1 + PERCENTILE_ERROR) * 1.0005 - 1) * 1000) / 1000;

/** An empty hour: what a harness's tools are added to. */
export function emptyHour(): HourSeries {
  return { calls: new Array<number>(FIGURES_HOUR_POINTS).fill(0), errors: new Array<number>(FIGURES_HOUR_POINTS).fill(0) };
}

/** A window with no calls: a tool never called. */
export function emptyWindow(): FigureWindow {
  return windowOf(new Float64Array(STRIDE));
}

function windowOf(counts: ArrayLike<number>): FigureWindow {
  let calls = 0;
  for (let o = 0; o < OUTCOMES.length; o++) calls += counts[o]!;
  const errors = {} as Record<CallErrorKind, number>;
  CALL_ERROR_KINDS.forEach((kind, i) => {
    errors[kind] = counts[i + 1]!;
  });
  const p50 = quantileOf(counts, 0.5, OUTCOMES.length);
  const p99 = quantileOf(counts, 0.99, OUTCOMES.length);
  return {
    calls,
    errors,
    error_rate: calls === 0 ? null : (calls - counts[0]!) / calls,
    p50_ms: p50 === undefined ? null : round(p50),
    p99_ms: p99 === undefined ? null : round(p99),
  };
}

/** Three significant digits (0.05 % more error, in FIGURES_ERROR): more would claim a precision the bins do not have. */
function round(ms: number): number {
  return Number(ms.toPrecision(3));
}
