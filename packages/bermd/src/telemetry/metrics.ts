/**
 * The instruments bermd records, made once on its meter, and the few methods the rooms call on the
 * paths they measure. Every attribute is bounded: a harness or tool name only when it is deployed (the
 * caller passes undefined otherwise), an outcome, an action, an MCP method from a fixed list; never
 * arguments, session ids or principals, which would make a series per caller.
 */
import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import { LabelSets, type ListedTool } from './label-sets.js';
import { outcomeOf } from './outcomes.js';

/** The semantic conventions' advice for MCP durations (seconds). */
const MCP_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
/** A call's wait and run: most take a millisecond or less, the longest run to their time limit. */
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
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
  private readonly operation: Histogram;
  private readonly sessionDuration: Histogram;
  private readonly calls: Counter;
  private readonly queueWait: Histogram;
  private readonly runTime: Histogram;
  private readonly deploys: Counter;
  private readonly gateRefusals: Counter;
  private readonly secretsReloads: Counter;
  /** Attribute sets made once per label combination: the call path allocates none once warm. */
  private readonly labels = new LabelSets();

  constructor(meter: Meter, sources: GaugeSources) {
    this.operation = meter.createHistogram('mcp.server.operation.duration', {
      description: 'MCP request duration as observed on the receiver from the time it was received until the result or ack is sent',
      unit: 's',
      advice: { explicitBucketBoundaries: MCP_BUCKETS },
    });
    this.sessionDuration = meter.createHistogram('mcp.server.session.duration', {
      description: 'The duration of the MCP session as observed on the MCP server',
      unit: 's',
      advice: { explicitBucketBoundaries: SESSION_BUCKETS },
    });
    this.calls = meter.createCounter('bermd.calls', { description: 'Tool calls, by harness, tool and outcome', unit: '{call}' });
    this.queueWait = meter.createHistogram('bermd.call.queue.duration', {
      description: 'How long a call waited for a worker, by harness',
      unit: 's',
      advice: { explicitBucketBoundaries: CALL_BUCKETS },
    });
    this.runTime = meter.createHistogram('bermd.call.run.duration', {
      description: 'How long a call ran on its worker, by harness',
      unit: 's',
      advice: { explicitBucketBoundaries: CALL_BUCKETS },
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
        for (const [harness, depth] of sources.queueDepths()) result.observe(queue, depth, this.labels.harness(harness));
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
    this.calls.add(1, this.labels.call(harness, tool, outcomeOf(code)));
    if (harness === undefined) return;
    if (waitSeconds !== undefined) this.queueWait.record(waitSeconds, this.labels.harness(harness));
    if (runSeconds !== undefined) this.runTime.record(runSeconds, this.labels.harness(harness));
  }

  /**
   * An MCP request was answered after `seconds`. `tool` is the tool of a `tools/call` when it is listed
   * (its MCP name and harness); `error` the semantic conventions' `error.type` when it failed (a JSON-RPC
   * error code, an HTTP status, or `tool_error`).
   */
  operationEnded(method: unknown, seconds: number, tool?: ListedTool, error?: string): void {
    this.operation.record(seconds, tool === undefined ? this.labels.request(method, error) : this.labels.toolCall(tool, error));
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

  /** Forgets the label sets of a name no longer deployed, so names that come and go leave nothing here. */
  forget(harness: string): void {
    this.labels.forget(harness);
  }
}
