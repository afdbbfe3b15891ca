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
import { counted, type HistogramSeries, type InstrumentDescription, OwnCounter, OwnHistogram, type SumSeries } from './own-instruments.js';

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

export interface CallInstruments {
  /** A call ended with `outcome`, after waiting and running these seconds when it got that far. */
  callEnded(
    harness: string | undefined,
    tool: string | undefined,
    outcome: CallOutcomeLabel,
    waitSeconds?: number,
    runSeconds?: number,
  ): void;
  /** An MCP request was answered after `seconds`. */
  operationEnded(method: unknown, seconds: number, tool: ListedTool | undefined, error: string | undefined): void;
  forget(harness: string): void;
  /** What bermd keeps itself, as the SDK's readers take it: nothing when the SDK's instruments keep it. */
  collect(end: HrTime): MetricData[];
}

/** The SDK's instruments, recorded with attribute sets made once per label combination. */
export class SdkCallInstruments implements CallInstruments {
  private readonly operation: Histogram;
  private readonly calls: Counter;
  private readonly queueWait: Histogram;
  private readonly runTime: Histogram;
  private readonly labels = new LabelSets<Attributes, Attributes, Attributes>({ call: (a) => a, harness: (a) => a, operation: (a) => a });

  constructor(meter: Meter) {
    this.operation = meter.createHistogram(OPERATION.name, { ...OPERATION, advice: { explicitBucketBoundaries: MCP_BUCKETS } });
    this.calls = meter.createCounter(CALLS.name, CALLS);
    this.queueWait = meter.createHistogram(QUEUE.name, { ...QUEUE, advice: { explicitBucketBoundaries: CALL_BUCKETS } });
    this.runTime = meter.createHistogram(RUN.name, { ...RUN, advice: { explicitBucketBoundaries: CALL_BUCKETS } });
  }

  callEnded(
    harness: string | undefined,
    tool: string | undefined,
    outcome: CallOutcomeLabel,
    waitSeconds?: number,
    runSeconds?: number,
  ): void {
    this.calls.add(1, this.labels.call(harness, tool, outcome));
    if (harness === undefined) return;
    if (waitSeconds !== undefined) this.queueWait.record(waitSeconds, this.labels.harness(harness));
    if (runSeconds !== undefined) this.runTime.record(runSeconds, this.labels.harness(harness));
  }

  operationEnded(method: unknown, seconds: number, tool: ListedTool | undefined, error: string | undefined): void {
    this.operation.record(seconds, tool === undefined ? this.labels.request(method, error) : this.labels.toolCall(tool, error));
  }

  forget(harness: string): void {
    this.labels.forget(harness);
  }

  collect(): MetricData[] {
    return [];
  }
}

/** A harness's queue and run series, each made at its first record, as the SDK makes a series. */
interface HarnessSeries {
  attributes: Attributes;
  queue?: HistogramSeries;
  run?: HistogramSeries;
}

/** bermd's own instruments, their series found by label as the SDK's attribute sets are. */
export class OwnCallInstruments implements CallInstruments {
  private readonly operation = new OwnHistogram(OPERATION, MCP_BUCKETS);
  private readonly calls = new OwnCounter(CALLS);
  private readonly queueWait = new OwnHistogram(QUEUE, CALL_BUCKETS);
  private readonly runTime = new OwnHistogram(RUN, CALL_BUCKETS);
  private readonly series = new LabelSets<SumSeries, HarnessSeries, HistogramSeries>({
    call: (a) => this.calls.seriesOf(a),
    harness: (attributes) => ({ attributes }),
    operation: (a) => this.operation.seriesOf(a),
  });

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

  operationEnded(method: unknown, seconds: number, tool: ListedTool | undefined, error: string | undefined): void {
    if (!counted(seconds)) return;
    (tool === undefined ? this.series.request(method, error) : this.series.toolCall(tool, error)).record(seconds);
  }

  forget(harness: string): void {
    this.series.forget(harness);
  }

  collect(end: HrTime): MetricData[] {
    const out: MetricData[] = [];
    for (const instrument of [this.operation, this.calls, this.queueWait, this.runTime]) {
      const data = instrument.collect(end);
      if (data !== undefined) out.push(data);
    }
    return out;
  }
}
