/**
 * The instruments bermd records, made once on its meter, and the few methods the rooms call on the
 * paths they measure. Every attribute is bounded: a harness or tool name only when it is deployed (the
 * caller passes undefined otherwise), an outcome, an action, an MCP method from a fixed list; never
 * arguments, session ids or principals, which would make a series per caller.
 */
import type { Counter, Histogram, HrTime, Meter } from '@opentelemetry/api';
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { CallInstruments } from './call-instruments.js';
import type { ListedTool } from './label-sets.js';
import { outcomeOf } from './outcomes.js';

/** An MCP session lives from seconds to a working day. */
const SESSION_BUCKETS = [1, 10, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400];

/** What the gauges read when a scrape or an export asks, from the rooms that hold it (wired in daemon.ts). */
export interface GaugeSources {
  /** Calls holding a worker now. */
  workersBusy(): number;
  /** Calls waiting for a worker, by harness (only harnesses with calls waiting). */
  queueDepths(): ReadonlyMap<string, number>;
  /** MCP 2025 sessions held. */
  sessions(): number;
  /** Open streams of server messages: 2025 sessions' GET streams and 2026-07-28 listens. */
  streams(): { session: number; listen: number };
  /** The store: whether it answers, as far as it knows; and for a shared store, seconds since it last reconciled (undefined before the first). */
  store(): { kind: 'directory' | 'postgres'; reachable: boolean; sinceReconcileSeconds?: number };
}

export type DeployAction = 'deploy' | 'undeploy' | 'rollback';

export class BermdMetrics {
  /** Those every call records, kept by bermd (`own`) or by the SDK on `meter` (call-instruments.ts). */
  private readonly perCall: CallInstruments;
  private readonly sessionDuration: Histogram;
  private readonly deploys: Counter;
  private readonly gateRefusals: Counter;
  private readonly secretsReloads: Counter;

  constructor(meter: Meter, sources: GaugeSources, own: boolean) {
    this.perCall = new CallInstruments(own ? undefined : meter);
    this.sessionDuration = meter.createHistogram('mcp.server.session.duration', {
      description: 'The duration of the MCP session as observed on the MCP server',
      unit: 's',
      advice: { explicitBucketBoundaries: SESSION_BUCKETS },
    });
    this.deploys = meter.createCounter('bermd.deploys', {
      description: 'Changes made to the deployed set through this bermd, by action',
      unit: '{change}',
    });
    this.gateRefusals = meter.createCounter('bermd.gate.refusals', {
      description: 'Deploys and rollbacks refused because they break tools or events used recently',
      unit: '{refusal}',
    });
    this.secretsReloads = meter.createCounter('bermd.secrets.reloads', {
      description: 'Reads of the secrets file on SIGHUP, by result',
      unit: '{reload}',
    });

    const workers = meter.createObservableGauge('bermd.workers.busy', { description: 'Workers running a call', unit: '{worker}' });
    const queue = meter.createObservableGauge('bermd.queue.depth', {
      description: 'Calls waiting for a worker, by harness',
      unit: '{call}',
    });
    const sessions = meter.createObservableGauge('bermd.mcp.sessions', { description: 'MCP 2025 sessions held', unit: '{session}' });
    const streams = meter.createObservableGauge('bermd.mcp.streams', {
      description: 'Open streams of server messages, by kind (session: a 2025 GET stream; listen: a 2026-07-28 listen)',
      unit: '{stream}',
    });
    const reachable = meter.createObservableGauge('bermd.store.reachable', {
      description: 'Whether the store answers (1) or not (0), by kind',
      unit: '1',
    });
    const sinceReconcile = meter.createObservableGauge('bermd.store.reconcile.age', {
      description: 'Seconds since the deployed set was last compared with the shared store',
      unit: 's',
    });
    meter.addBatchObservableCallback(
      (result) => {
        result.observe(workers, sources.workersBusy());
        for (const [harness, depth] of sources.queueDepths()) result.observe(queue, depth, { harness });
        result.observe(sessions, sources.sessions());
        const open = sources.streams();
        result.observe(streams, open.session, { kind: 'session' });
        result.observe(streams, open.listen, { kind: 'listen' });
        const store = sources.store();
        result.observe(reachable, store.reachable ? 1 : 0, { kind: store.kind });
        if (store.sinceReconcileSeconds !== undefined) result.observe(sinceReconcile, store.sinceReconcileSeconds);
      },
      [workers, queue, sessions, streams, reachable, sinceReconcile],
    );
  }

  /**
   * A call ended: `harness` and `tool` as deployed (undefined when the call named what is not), `code`
   * the runtime's error code (undefined when it answered), the seconds it waited and ran (undefined when
   * it never got that far).
   */
  callEnded(
    harness: string | undefined,
    tool: string | undefined,
    code: string | undefined,
    waitSeconds?: number,
    runSeconds?: number,
  ): void {
    this.perCall.callEnded(harness, tool, outcomeOf(code), waitSeconds, runSeconds);
  }

  /**
   * An MCP request was answered after `seconds`. `tool` is the tool of a `tools/call` when it is listed
   * (its MCP name and harness); `error` the semantic conventions' `error.type` when it failed (a JSON-RPC
   * error code, an HTTP status, or `tool_error`).
   */
  operationEnded(method: unknown, seconds: number, tool?: ListedTool, error?: string): void {
    this.perCall.operationEnded(method, seconds, tool, error);
  }

  /** A 2025 session ended after `seconds`. */
  sessionEnded(seconds: number): void {
    this.sessionDuration.record(seconds);
  }

  deployed(action: DeployAction): void {
    this.deploys.add(1, { action });
  }

  gateRefused(action: 'deploy' | 'rollback'): void {
    this.gateRefusals.add(1, { action });
  }

  secretsReloaded(ok: boolean): void {
    this.secretsReloads.add(1, { result: ok ? 'ok' : 'failed' });
  }

  /** Forgets how the series of a name no longer deployed are found, so names that come and go leave nothing here but their series. */
  forget(harness: string): void {
    this.perCall.forget(harness);
  }

  /** What bermd keeps itself rather than the SDK, as of `end`, for the readers to take beside the meter's. */
  ownData(end: HrTime): MetricData[] {
    return this.perCall.collect(end);
  }
}
