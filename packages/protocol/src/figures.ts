/**
 * bermd's live figures of its tools' calls, as `GET /figures`, `GET /harnesses/{name}/figures` and the
 * `GET /figures/events` stream give them: what the page charts. They are one bermd process's, kept in
 * its memory since it started serving the harness (not OpenTelemetry's, and not summed over replicas).
 */

/**
 * How a call that did not answer failed, as bermd's calls counter labels it: every kind is always
 * present in `errors`, zero or not, so a reader never tells "none" from "not reported".
 */
export const CALL_ERROR_KINDS = ['tool_error', 'refused', 'timeout', 'memory', 'result_too_large', 'busy', 'cancelled', 'error'] as const;
export type CallErrorKind = (typeof CALL_ERROR_KINDS)[number];

/** The points of a `last_hour` series: one per minute, oldest first, the last being the minute under way. */
export const FIGURES_HOUR_POINTS = 60;

/** Calls over a span of time. */
export interface FigureWindow {
  calls: number;
  errors: Record<CallErrorKind, number>;
  /** The failed calls' share of `calls`, from 0 to 1; null without calls. */
  error_rate: number | null;
  /**
   * The median and 99th percentile of the calls' durations (waiting for a worker and running), in
   * milliseconds, estimated from a histogram within `percentile_error` of a duration some call took;
   * null when no call got to a worker (one refused or turned away busy has no duration).
   */
  p50_ms: number | null;
  p99_ms: number | null;
}

/** Calls and failed calls per minute over the last hour: `FIGURES_HOUR_POINTS` each, oldest first. */
export interface HourSeries {
  calls: number[];
  errors: number[];
}

export interface ToolFigures {
  /** The tool's name in its manifest. */
  name: string;
  since_start: FigureWindow;
  /** The last minute: the ten seconds under way and the five before them (between 50 and 60 seconds). */
  last_minute: FigureWindow;
  last_hour: HourSeries;
}

/** `GET /harnesses/{name}/figures`. */
export interface HarnessFigures {
  name: string;
  /** When this bermd began counting the harness's calls: its start, or the harness's first deploy since. */
  since: string;
  /** The largest relative error of a percentile estimate (0.0905: within 9.05 % of a duration some call took). */
  percentile_error: number;
  /** Every tool of the manifest, in its order, called or not. */
  tools: ToolFigures[];
}

/** `GET /figures`: each deployed harness's calls per minute over the last hour, its tools' together, by name. */
export interface FiguresSummary {
  harnesses: Array<{ name: string; last_hour: HourSeries }>;
}

/**
 * The `data` of a `figures` event on `GET /figures/events`: the harnesses whose figures moved since the
 * previous event (calls came, or the last minute or hour moved on while it held calls). A reader reads
 * again what it shows of them.
 */
export interface FiguresChange {
  harnesses: string[];
}
