/**
 * A counter and an explicit-bucket histogram kept by bermd itself, for the instruments every call records
 * (metrics.ts). The SDK's record path sorts and serialises a call's attributes to find their series at
 * every record, which was the largest share of what metrics cost a call (docs/decisions.md). Here a series
 * is an object the caller holds (label-sets.ts finds it by label, as it found attribute sets), so a record
 * is a few additions. What they collect is the SDK's own metric data, cumulative, handed to its readers
 * beside what the meter collects (telemetry.ts); `test/own-instruments.test.ts` holds both to the SDK's
 * instruments fed the same records.
 *
 * A series is keyed by what its attributes say, not by the object: a harness forgotten and deployed again
 * finds its series again rather than starting a second with the same labels. Like the SDK's, an instrument
 * keeps at most `CARDINALITY_LIMIT` series, the last of them the overflow series that takes every record
 * past it.
 */
import { type Attributes, type HrTime, ValueType } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import {
  AggregationTemporality,
  DataPointType,
  type HistogramMetricData,
  InstrumentType,
  type MetricData,
  type SumMetricData,
} from '@opentelemetry/sdk-metrics';

/** The SDK's default limit of series per instrument, the overflow series included. */
const CARDINALITY_LIMIT = 2000;
const OVERFLOW: Attributes = { 'otel.metric.overflow': true };

export interface InstrumentDescription {
  name: string;
  description: string;
  unit: string;
}

/** A counter's series: what it has added up since `start`. */
export class SumSeries {
  value = 0;
  constructor(
    readonly attributes: Attributes,
    readonly start: HrTime,
  ) {}

  /** Adds `value` (never negative: see `counted`). */
  add(value: number): void {
    this.value += value;
  }
}

/** A histogram's series: counts per bucket (upper bounds inclusive, the last unbounded), sum, min and max. */
export class HistogramSeries {
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  readonly counts: number[];
  constructor(
    readonly attributes: Attributes,
    readonly start: HrTime,
    private readonly boundaries: readonly number[],
  ) {
    this.counts = new Array<number>(boundaries.length + 1).fill(0);
  }

  /** As the SDK's histogram, NaN is not counted (a negative value never comes this far: see `counted`). */
  record(value: number): void {
    if (Number.isNaN(value)) return;
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
    // Few buckets, most values in the first: a forward scan finds them sooner than a binary search.
    const bounds = this.boundaries;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
  }
}

/**
 * Whether a counter or histogram counts `value`: as the SDK's, not when it is negative, and then its series
 * is not made either.
 */
export function counted(value: number): boolean {
  return !(value < 0);
}

/** What the series of one instrument are found by: the attributes' entries, sorted by key. */
function contentKey(attributes: Attributes): string {
  return JSON.stringify(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

abstract class OwnInstrument<S extends SumSeries | HistogramSeries> {
  private readonly byContent = new Map<string, S>();
  protected readonly series: S[] = [];
  private overflow?: S;

  constructor(protected readonly description: InstrumentDescription) {}

  /** The series of `attributes`, made the first time (the overflow series once the limit is reached). */
  seriesOf(attributes: Attributes): S {
    const key = contentKey(attributes);
    let series = this.byContent.get(key);
    if (series !== undefined) return series;
    if (this.series.length >= CARDINALITY_LIMIT - 1) {
      if (this.overflow === undefined) this.series.push((this.overflow = this.made(OVERFLOW)));
      return this.overflow;
    }
    series = this.made(attributes);
    this.byContent.set(key, series);
    this.series.push(series);
    return series;
  }

  /** Every series, as the SDK's readers take them; undefined when nothing was recorded, as the SDK omits it. */
  abstract collect(end: HrTime): MetricData | undefined;

  protected abstract made(attributes: Attributes): S;
}

export class OwnCounter extends OwnInstrument<SumSeries> {
  collect(end: HrTime): SumMetricData | undefined {
    if (this.series.length === 0) return undefined;
    return {
      descriptor: { ...this.description, type: InstrumentType.COUNTER, valueType: ValueType.DOUBLE, advice: {} },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      dataPoints: this.series.map((s) => ({ attributes: s.attributes, startTime: s.start, endTime: end, value: s.value })),
    } as SumMetricData;
  }

  protected made(attributes: Attributes): SumSeries {
    return new SumSeries(attributes, millisToHrTime(Date.now()));
  }
}

export class OwnHistogram extends OwnInstrument<HistogramSeries> {
  constructor(
    description: InstrumentDescription,
    private readonly boundaries: readonly number[],
  ) {
    super(description);
  }

  collect(end: HrTime): HistogramMetricData | undefined {
    if (this.series.length === 0) return undefined;
    const boundaries = [...this.boundaries];
    return {
      descriptor: {
        ...this.description,
        type: InstrumentType.HISTOGRAM,
        valueType: ValueType.DOUBLE,
        advice: { explicitBucketBoundaries: boundaries },
      },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: this.series.map((s) => ({
        attributes: s.attributes,
        startTime: s.start,
        endTime: end,
        value: {
          buckets: { boundaries, counts: [...s.counts] },
          count: s.count,
          sum: s.sum,
          min: s.min,
          max: s.max,
        },
      })),
    } as HistogramMetricData;
  }

  protected made(attributes: Attributes): HistogramSeries {
    return new HistogramSeries(attributes, millisToHrTime(Date.now()), this.boundaries);
  }
}
