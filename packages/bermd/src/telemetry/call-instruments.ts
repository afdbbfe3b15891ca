/**
 * The instruments every call records: the calls counter, the queue and run histograms per harness, and
 * `mcp.server.operation.duration`. They are kept by bermd itself (own-instruments.ts) wherever its readers
 * take cumulative sums and explicit buckets, which is always for `/metrics` and by default for OTLP; an
 * OTLP exporter asking for delta temporality or exponential histograms gets the SDK's, which compute them.
 */
import type { Attributes, Counter, Histogram, HrTime, Meter } from '@opentelemetry/api';
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { LabelSets, type ListedTool } from './label-sets.js';
import type { CallOutcomeLabel } from './outcomes.js';
import { counted, type InstrumentDescription, OwnCounter, OwnHistogram } from './own-instruments.js';

/** The semantic conventions' advice for MCP durations (seconds). */
const MCP_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
/** A call's wait and run: most take a millisecond or less, the longest run to their time limit. */
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

const OPERATION: InstrumentDescription = {
  name: 'mcp.server.operation.duration',
  description: 'MCP request duration as observed on the receiver from the time it was received until the result or ack is sent',
  unit: 's',
};
const CALLS: InstrumentDescription = { name: 'bermd.calls', description: 'Tool calls, by harness, tool and outcome', unit: '{call}' };
const QUEUE: InstrumentDescription = {
  name: 'bermd.call.queue.duration',
  description: 'How long a call waited for a worker, by harness',
  unit: 's',
};
const RUN: InstrumentDescription = {
  name: 'bermd.call.run.duration',
  description: 'How long a call ran on its worker, by harness',
  unit: 's',
};

/** One label combination's series of a counter. */
interface Adds {
  add(value: number): void;
}

/** One label combination's series of a histogram. */
interface Records {
  record(value: number): void;
}

/** An instrument's series, found by their attributes. */
interface SeriesSource<S> {
  seriesOf(attributes: Attributes): S;
}

/** The SDK's counter as series: each holds the attribute set it records with. */
function sdkCounter(counter: Counter): SeriesSource<Adds> {
  return { seriesOf: (attributes) => ({ add: (value) => counter.add(value, attributes) }) };
}

/** The SDK's histogram as series: each holds the attribute set it records with. */
function sdkHistogram(histogram: Histogram): SeriesSource<Records> {
  return { seriesOf: (attributes) => ({ record: (value) => histogram.record(value, attributes) }) };
}

/** A harness's queue and run series, each made at its first record, as the SDK makes a series. */
interface HarnessSeries {
  attributes: Attributes;
  queue?: Records;
  run?: Records;
}

/**
 * The four instruments and the series their records go to, found by label (label-sets.ts): bermd's own
 * (own-instruments.ts), or, given a meter, the SDK's made on it.
 */
export class CallInstruments {
  private readonly operation: SeriesSource<Records>;
  private readonly calls: SeriesSource<Adds>;
  private readonly queueWait: SeriesSource<Records>;
  private readonly runTime: SeriesSource<Records>;
  /** bermd's own, which it collects itself; none when the SDK's keep the records. */
  private readonly own: readonly (OwnCounter | OwnHistogram)[];
  private readonly series = new LabelSets<Adds, HarnessSeries, Records>({
    call: (attributes) => this.calls.seriesOf(attributes),
    harness: (attributes) => ({ attributes }),
    operation: (attributes) => this.operation.seriesOf(attributes),
  });

  constructor(meter?: Meter) {
    if (meter === undefined) {
      const operation = new OwnHistogram(OPERATION, MCP_BUCKETS);
      const calls = new OwnCounter(CALLS);
      const queueWait = new OwnHistogram(QUEUE, CALL_BUCKETS);
      const runTime = new OwnHistogram(RUN, CALL_BUCKETS);
      this.own = [operation, calls, queueWait, runTime];
      this.operation = operation;
      this.calls = calls;
      this.queueWait = queueWait;
      this.runTime = runTime;
      return;
    }
    this.own = [];
    this.operation = sdkHistogram(
      meter.createHistogram(OPERATION.name, { ...OPERATION, advice: { explicitBucketBoundaries: MCP_BUCKETS } }),
    );
    this.calls = sdkCounter(meter.createCounter(CALLS.name, CALLS));
    this.queueWait = sdkHistogram(meter.createHistogram(QUEUE.name, { ...QUEUE, advice: { explicitBucketBoundaries: CALL_BUCKETS } }));
    this.runTime = sdkHistogram(meter.createHistogram(RUN.name, { ...RUN, advice: { explicitBucketBoundaries: CALL_BUCKETS } }));
  }

  /** A call ended with `outcome`, after waiting and running these seconds when it got that far. */
  callEnded(
    harness: string | undefined,
    tool: string | undefined,
    outcome: CallOutcomeLabel,
    waitSeconds?: number,
    runSeconds?: number,
  ): void {
    this.series.call(harness, tool, outcome).add(1);
    if (harness === undefined) return;
    const own = this.series.harness(harness);
    if (waitSeconds !== undefined && counted(waitSeconds)) (own.queue ??= this.queueWait.seriesOf(own.attributes)).record(waitSeconds);
    if (runSeconds !== undefined && counted(runSeconds)) (own.run ??= this.runTime.seriesOf(own.attributes)).record(runSeconds);
  }

  /** An MCP request was answered after `seconds`. */
  operationEnded(method: unknown, seconds: number, tool: ListedTool | undefined, error: string | undefined): void {
    if (!counted(seconds)) return;
    (tool === undefined ? this.series.request(method, error) : this.series.toolCall(tool, error)).record(seconds);
  }

  forget(harness: string): void {
    this.series.forget(harness);
  }

  /** What bermd keeps itself, as the SDK's readers take it: nothing when the SDK's instruments keep it. */
  collect(end: HrTime): MetricData[] {
    const out: MetricData[] = [];
    for (const instrument of this.own) {
      const data = instrument.collect(end);
      if (data !== undefined) out.push(data);
    }
    return out;
  }
}
