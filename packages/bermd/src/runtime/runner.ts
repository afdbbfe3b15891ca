/**
 * `ToolRunner`: calls a deployed harness's tools, each call in a fresh instance on a worker thread.
 *
 * Guest code runs off the main thread: a pool of worker threads (pool.ts) runs each call, and a
 * call that outlives `callTimeoutMs` is stopped, which makes the pool terminate that worker (the only way
 * to stop a guest spinning in a loop) while the other workers keep serving. A runner made `inline` (for a
 * command that runs a call and ends, where a thread's start costs more than the call) runs on its own
 * thread the calls that reach no host call served off the guest's thread, each stopped at its limit by
 * V8's watchdog (inline.ts), and the others on workers started when first needed. Which call gets a worker is
 * decided in front of the pool, fairly between harnesses (fair-queue.ts); the pool is handed only calls
 * that may run. The runner checks what a call names and carries, then takes it through its steps (a
 * `Call`, call.ts). A call's clock starts when it is accepted, so time spent waiting for a worker counts
 * against its limit.
 *
 * How modules reach the workers: every task carries the `WebAssembly.Module`s it may need (the called
 * harness, plus, when it imports `berm.call`, each deployed program its calls can reach within the depth
 * limit). Cloning a module to a worker shares V8's compiled code rather than copying it: a task carrying a
 * module costs the same as one carrying only a digest, within noise (bench/runtime.js prints both every
 * run), so a per-worker module cache would add a miss protocol and invalidation for no gain. What is costly to rebuild, the validators, is cached per
 * worker under a key unique to each deploy (chain.ts); their source travels only with tasks that can
 * use them (a harness that imports `berm.call` or `berm.emit`, and the programs it can reach).
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULT_LIMITS, DEFAULT_MAX_CALL_DEPTH, DEFAULT_MAX_QUEUE, workersFor } from '../limits.js';
import { DeployedSet, type HarnessInput, PreparedHarness, positiveInteger, prepareHarness } from './deployed.js';
import { Call, type CallOptions, type CallOutcome, type Reached } from './call.js';
import { isRunnerError, notPermitted, RunnerError, type CallError } from './errors.js';
import { FairQueue } from './fair-queue.js';
import { InlinePool } from './inline.js';
import { type PoolOptions, type StartedWorkers, type TaskPool, WorkerPool } from './pool.js';
import { workerScriptPath } from './worker-script.js';
import type { HostEnvelope } from './host-call.js';
import { answerWorker, ASK_HOST_CALLS, type HostService } from './http-fetch.js';
import { capMemory } from './memory-cap.js';
import { type Check, violation } from './schema-issues.js';
import { serveAsk } from './ask.js';
import type { GuestOutcome, GuestReport, ProgramPayload, ReportMessage, Task, TaskResult, WorkerMessage } from './worker-messages.js';

export const DEFAULT_CALL_TIMEOUT_MS = DEFAULT_LIMITS.timeout;
export const DEFAULT_MAX_MEMORY_BYTES = DEFAULT_LIMITS.max_memory;
export const DEFAULT_MAX_RESULT_BYTES = DEFAULT_LIMITS.max_result_size;
export const DEFAULT_MAX_CONCURRENCY = DEFAULT_LIMITS.max_concurrency;
export { DEFAULT_MAX_CALL_DEPTH, DEFAULT_MAX_QUEUE };

export interface RunnerOptions {
  /** Wall-clock limit of one call, nested calls included, from the moment the runner accepts it (waiting for a worker included). */
  callTimeoutMs?: number;
  /** The most memory one guest instance may have; see `capMemory`. */
  maxMemoryBytes?: number;
  /** The longest result envelope (and host-call request) read from a guest; also the bytes of logs and events one call may send. */
  maxResultBytes?: number;
  /** How deep `berm.call` may nest; 0 refuses the first nested call. */
  maxCallDepth?: number;
  /** How many calls entering through one harness may run at once (a harness may set fewer). Never more than the pool holds. */
  maxConcurrency?: number;
  /** How many calls one harness may have waiting for a worker; a call past that is refused at once (`busy`). */
  maxQueue?: number;
  /**
   * Worker threads: a fixed count, or bounds. Default: at most `workersFor(maxConcurrency)`, so that one
   * harness at its limit leaves workers for the others; kept even when idle, the limit plus one (or half the cores, if more).
   */
  threads?: number | { min?: number; max?: number };
  /** Receives every call's reports: each accepted `berm.log` and `berm.emit`. */
  onReport?: (report: GuestReport) => void;
  /** Services for the host calls a worker forwards to the main thread (`berm.http.fetch`, ...), by dotted name; a name without one is refused. */
  hostServices?: ReadonlyMap<string, HostService>;
  /** Told of every call as it ends (the daemon's metrics); a runner without it does no more than before. */
  onCallEnd?: CallEndListener;
  /** Told of each accepted `berm.resource_updated`: `harness`'s resource at `path` changed. */
  onResourceUpdated?: (harness: string, path: string) => void;
  /**
   * Worker threads started ahead (`startWorkers`), taken as the pool's own: a caller that knows early it
   * will run calls starts them before it imports and prepares the rest. They count towards `threads`.
   */
  started?: StartedWorkers;
  /**
   * Runs on this thread the calls whose programs import no host call served off the guest's thread
   * (`ASYNC_HOST_CALLS`, `ASK_HOST_CALLS`), each stopped at its time limit by V8's watchdog rather than by
   * terminating its worker (inline.ts); workers are started only for the others, when one comes (or at
   * once when `started` gives some). For a process that runs a call or two and ends; a daemon, whose
   * calls must not wait on one another, leaves it off.
   */
  inline?: boolean;
}

/**
 * A call ended: its harness and tool when they are deployed (undefined when the call named what is not,
 * so a caller's typos make no labels), its error code (undefined when it answered), and the seconds it
 * waited for a worker and ran on one (undefined when it never got that far).
 */
export type CallEndListener = (
  harness: string | undefined,
  tool: string | undefined,
  code: CallError['code'] | undefined,
  waitSeconds: number | undefined,
  runSeconds: number | undefined,
) => void;

/** The built worker script's path (worker-script.ts). */
function workerScript(): string {
  const script = workerScriptPath();
  if (script === undefined)
    throw new RunnerError(
      'bad-option',
      `the runtime's worker script is missing (${fileURLToPath(new URL('./worker.js', import.meta.url))}): build bermd first`,
    );
  return script;
}

/** The fewest workers kept when the limits ask for fewer: half the cores. */
const DEFAULT_MIN_THREADS = Math.max(1, Math.floor(os.availableParallelism() / 2));

/** What a call that never ran reached: nothing (made only then, not for every call). */
function none(): Reached {
  return { tools: [], events: [] };
}

/** The report without its call's id, which is the runtime's own. */
function reportOf(message: ReportMessage): GuestReport {
  switch (message.kind) {
    case 'log':
      return { kind: 'log', harness: message.harness, tool: message.tool, level: message.level, message: message.message };
    case 'event':
      return { kind: 'event', harness: message.harness, tool: message.tool, event: message.event, fields: message.fields };
    case 'progress': {
      const { callId: _, ...report } = message;
      return report;
    }
  }
}

function safely(listener: (report: GuestReport) => void, report: GuestReport): void {
  safelyCall(() => listener(report));
}

function safelyCall(fn: () => void): void {
  try {
    fn();
  } catch (e) {
    // A throwing listener must not take a call, or the runner, down with it.
    process.emitWarning(`a tool runner listener threw: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export class ToolRunner {
  readonly callTimeoutMs: number;
  readonly maxMemoryBytes: number;
  readonly maxResultBytes: number;
  readonly maxCallDepth: number;
  readonly maxConcurrency: number;
  readonly maxQueue: number;
  /** The pool's size: the most calls running at once. */
  readonly workers: number;
  /** Made when the runner is, unless it runs inline, when it is made for the first call that needs a worker. */
  private pool?: WorkerPool<Task, TaskResult>;
  private readonly poolOptions: PoolOptions;
  private readonly inlinePool?: InlinePool;
  private readonly queue: FairQueue;
  private readonly deployed: DeployedSet;
  private readonly calls = new Map<number, Call>();
  private readonly onReport?: (report: GuestReport) => void;
  private readonly onResourceUpdated?: (harness: string, path: string) => void;
  private readonly hostServices: ReadonlyMap<string, HostService>;
  private readonly onCallEnd?: CallEndListener;
  private nextCallId = 1;
  private closed = false;

  constructor(options: RunnerOptions = {}) {
    this.callTimeoutMs = positiveInteger('callTimeoutMs', options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, 1);
    this.maxMemoryBytes = positiveInteger('maxMemoryBytes', options.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES, 65536);
    this.maxResultBytes = positiveInteger('maxResultBytes', options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES, 1);
    this.maxCallDepth = positiveInteger('maxCallDepth', options.maxCallDepth ?? DEFAULT_MAX_CALL_DEPTH, 0);
    this.maxQueue = positiveInteger('maxQueue', options.maxQueue ?? DEFAULT_MAX_QUEUE, 0);
    const threads = typeof options.threads === 'number' ? { min: options.threads, max: options.threads } : (options.threads ?? {});
    if (threads.min !== undefined) positiveInteger('threads.min', threads.min, 1);
    if (threads.max !== undefined) positiveInteger('threads.max', threads.max, 1);
    const concurrency = positiveInteger('maxConcurrency', options.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY, 1);
    this.workers = threads.max ?? workersFor(concurrency);
    // A pool no larger than one harness's limit would let that harness hold every worker.
    this.maxConcurrency = Math.min(concurrency, this.workers);
    this.deployed = new DeployedSet({
      callTimeoutMs: this.callTimeoutMs,
      maxResultBytes: this.maxResultBytes,
      maxCallDepth: this.maxCallDepth,
      maxConcurrency: this.maxConcurrency,
    });
    this.queue = new FairQueue(this.workers, this.maxQueue);
    this.onReport = options.onReport;
    this.onResourceUpdated = options.onResourceUpdated;
    this.hostServices = options.hostServices ?? new Map();
    this.onCallEnd = options.onCallEnd;
    this.poolOptions = {
      filename: workerScript(),
      // Kept alive even when idle: enough for a harness at its limit and one call of another, so a worker
      // terminated under a runaway call is replaced at once rather than when the next call needs it.
      min: Math.min(threads.min ?? Math.max(this.maxConcurrency + 1, DEFAULT_MIN_THREADS), this.workers),
      max: this.workers,
      // A worker above the minimum that ended as soon as it idled would make a daemon's bursts pay a thread
      // start (tens of ms) each time.
      idleTimeoutMs: 30_000,
      onMessage: (message) => this.onWorkerMessage(message as WorkerMessage),
      started: options.started,
    };
    if (options.inline === true) this.inlinePool = new InlinePool((message) => this.onWorkerMessage(message as WorkerMessage));
    if (this.inlinePool === undefined || options.started !== undefined) this.pool = new WorkerPool(this.poolOptions);
  }

  /** Where `call` runs: on this thread when the runner is inline and the call reaches nothing served off it, else on a worker. */
  private poolFor(call: Call): TaskPool<Task, TaskResult> {
    if (this.inlinePool !== undefined && call.programs.every((p) => this.deployed.ownerOf(p)?.forwards === false)) return this.inlinePool;
    this.pool ??= new WorkerPool<Task, TaskResult>(this.poolOptions);
    return this.pool;
  }

  /** Caps the image's memory at this runner's limit and compiles it: what a deploy should store in `HarnessInput.module`. */
  async compile(bytes: Uint8Array): Promise<WebAssembly.Module> {
    return WebAssembly.compile(capMemory(bytes, this.maxMemoryBytes));
  }

  /**
   * Everything about a harness that can fail, done without touching the deployed set: the manifest's
   * tools are checked against the module's exports, and validators for every tool's arguments and every
   * event's fields are compiled (once: `setHarness` reuses them). Throws `RunnerError` (`bad-schema`,
   * `bad-harness`). A deploy calls this before storing anything, then `setHarness` once stored.
   */
  prepareHarness(harness: HarnessInput): PreparedHarness {
    return prepareHarness(harness);
  }

  /**
   * Deploys (or replaces) `name`, from a `prepareHarness` result or from the parts (then prepared here,
   * throwing as `prepareHarness` does, with the deployed set unchanged). Calls already running finish
   * with the harness they started with.
   */
  setHarness(name: string, harness: HarnessInput | PreparedHarness): void {
    if (this.closed) throw new RunnerError('closed', 'the tool runner is closed');
    this.deployed.set(name, harness instanceof PreparedHarness ? harness : prepareHarness(harness));
  }

  /** Undeploys `name`; true when it was deployed. Calls already running finish. */
  removeHarness(name: string): boolean {
    return this.deployed.delete(name);
  }

  has(name: string): boolean {
    return this.deployed.get(name) !== undefined;
  }

  /** The limits `name` is served with (its result limit bounds what a receipt keeps, its time limit how long a call may run), if it is deployed. */
  limitsOf(name: string): { callTimeoutMs: number; maxResultBytes: number } | undefined {
    const entry = this.deployed.get(name);
    return entry === undefined ? undefined : { callTimeoutMs: entry.callTimeoutMs, maxResultBytes: entry.bare.maxResultBytes };
  }

  /** The digest `name` was deployed with, if it is. */
  digestOf(name: string): string | undefined {
    return this.deployed.get(name)?.digest;
  }

  /** Runs `harness`'s `tool` with `args` (a JSON value; undefined means `{}`). Never rejects: failures are outcomes. */
  async call(harness: string, tool: string, args: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    const call = this.accept(harness, tool, args, options);
    if (!(call instanceof Call)) {
      if (this.onCallEnd !== undefined) this.refused(harness, tool, call.code);
      return { error: call, reached: none() };
    }
    return this.run(call, harness, tool, options);
  }

  /**
   * Runs `harness`'s export `exportName` (a prompt's, `berm_resource_read`, `berm_complete`) with
   * `request` as its JSON input, as a tool's call runs: in its harness's line, on a worker, with the
   * harness's time, memory and result limits and the caller's permissions. The caller checked the
   * request against what the manifest declares. Never rejects: failures are outcomes.
   */
  async runExport(harness: string, exportName: string, request: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    if (this.closed) return { error: { code: 'closed', message: 'the tool runner is closed' }, reached: none() };
    const caller = options.caller;
    if (caller !== undefined && !caller.mayCall(harness)) return { error: notPermitted(caller.name, harness, exportName), reached: none() };
    const entry = this.deployed.get(harness);
    if (entry === undefined) return { error: { code: 'unknown-harness', message: `no harness "${harness}" is deployed` }, reached: none() };
    if (options.signal?.aborted)
      return { error: { code: 'cancelled', message: `${harness}.${exportName} was cancelled before it started` }, reached: none() };
    const programs = this.deployed.programsFor(entry);
    const call = new Call(this.nextCallId++, entry, exportName, JSON.stringify(request), programs, this.maxCallDepth, options, exportName);
    return this.run(call, harness, exportName, options);
  }

  private async run(call: Call, harness: string, tool: string, options: CallOptions): Promise<CallOutcome> {
    this.calls.set(call.id, call);
    const ran = call.enter(this.queue, this.poolFor(call));
    if (ran === undefined) {
      this.calls.delete(call.id);
      this.onCallEnd?.(harness, tool, 'busy', undefined, undefined);
      return { error: call.busy(this.maxQueue), reached: none() };
    }
    let outcome: GuestOutcome;
    try {
      outcome = call.outcomeOf(await ran);
    } catch (e) {
      outcome = { error: call.failureOf(e, this.closed) };
    } finally {
      call.end();
      this.calls.delete(call.id);
    }
    options.trace?.ended('error' in outcome ? outcome.error : undefined);
    if (this.onCallEnd !== undefined) {
      const timing = call.timing();
      this.onCallEnd(harness, tool, 'error' in outcome ? outcome.error.code : undefined, timing.waited, timing.ran);
    }
    return call.answer(outcome);
  }

  /** Worker threads alive: none for an inline runner until a call needs one (inline.ts). */
  get liveThreads(): number {
    return this.pool?.size ?? 0;
  }

  /** Busy workers and the calls waiting for one, by harness: what the daemon's gauges read. */
  load(): { busy: number; waiting: ReadonlyMap<string, number> } {
    return { busy: this.queue.active, waiting: this.queue.waitingByHarness() };
  }

  /** A call refused before it was made, told with the names it gave only as far as they are deployed. */
  private refused(harness: string, tool: string, code: CallError['code']): void {
    const entry = this.deployed.get(harness);
    const known = entry?.manifest.tools.some((t) => t.name === tool) === true;
    this.onCallEnd!(entry === undefined ? undefined : harness, known ? tool : undefined, code, undefined, undefined);
  }

  /** Stops every worker; calls still running or waiting end with `closed`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const call of this.calls.values()) if (call.waiting) call.stop.abort();
    await Promise.all([this.pool?.destroy(), this.inlinePool?.destroy()]);
  }

  /** The call, once its harness, its tool and its arguments are found good; else why it is refused. */
  private accept(harness: string, tool: string, args: unknown, options: CallOptions): Call | CallError {
    if (this.closed) return { code: 'closed', message: 'the tool runner is closed' };
    // Before the lookup, so a caller learns nothing of what it may not call, not even whether it is deployed.
    const caller = options.caller;
    if (caller !== undefined && !caller.mayCall(harness)) return notPermitted(caller.name, harness, tool);
    const entry = this.deployed.get(harness);
    if (entry === undefined) return { code: 'unknown-harness', message: `no harness "${harness}" is deployed` };
    let check: Check | undefined;
    let programs: ProgramPayload[];
    try {
      check = entry.validators.tool(tool);
      programs = check === undefined ? [] : this.deployed.programsFor(entry);
    } catch (e) {
      // Only a restored harness compiles here, and its schemas compiled when it was deployed: a bermd
      // whose validator no longer compiles them. Its deploy again is refused, naming the schema.
      if (!isRunnerError(e)) throw e;
      return { code: 'internal', message: `${harness}.${tool} cannot be called: ${e.message} (deploy the image again to see why)` };
    }
    if (check === undefined) return { code: 'unknown-tool', message: `harness "${harness}" has no tool "${tool}"` };
    const value = args === undefined ? {} : args;
    let text: string;
    try {
      text = JSON.stringify(value);
    } catch (e) {
      return { code: 'invalid-arguments', message: `${harness}.${tool}: arguments are not JSON (${(e as Error).message})`, path: '' };
    }
    const problem = violation(check, 'argument', value);
    if (problem !== undefined) return { code: 'invalid-arguments', message: `${harness}.${tool}: ${problem.message}`, path: problem.path };
    if (options.signal?.aborted) return { code: 'cancelled', message: `${harness}.${tool} was cancelled before it started` };
    return new Call(this.nextCallId++, entry, tool, text, programs, this.maxCallDepth, options);
  }

  /** Runs a forwarded host call's service and wakes the waiting worker with its envelope (http-fetch.ts). */
  private serveHost(call: Call | undefined, message: Extract<WorkerMessage, { kind: 'host' }>): void {
    const { reply, flag, name } = message;
    const service = this.hostServices.get(name);
    if (call === undefined || call.stop.aborted) {
      answerWorker(reply, flag, { refused: `${name}: the call has ended` });
      return;
    }
    const payload = call.programs.find((p) => p.name === message.harness);
    const owner = payload === undefined ? undefined : this.deployed.ownerOf(payload);
    if (ASK_HOST_CALLS.includes(name)) {
      serveAsk(call, message, owner?.asks ?? []);
      return;
    }
    if (service === undefined) {
      answerWorker(reply, flag, { refused: `${name} is not served by this host` });
      return;
    }
    let answered: Promise<HostEnvelope>;
    try {
      answered = service({
        name,
        harness: message.harness,
        tool: message.tool,
        entry: call.entry.name,
        caller: call.options.caller?.name,
        context: owner?.context,
        request: message.request,
        signal: call.stop.signal,
        trace: call.options.trace?.host(name),
        idempotencyKey: message.key,
      });
    } catch (e) {
      answered = Promise.reject(e);
    }
    answered.then(
      (envelope) => answerWorker(reply, flag, envelope),
      (e: unknown) => answerWorker(reply, flag, { failed: `${name} failed in the host: ${e instanceof Error ? e.message : String(e)}` }),
    );
  }

  private onWorkerMessage(message: WorkerMessage): void {
    const call = this.calls.get(message.callId);
    if (message.marks !== undefined) call?.marked(message.marks);
    switch (message.kind) {
      case 'host':
        this.serveHost(call, message);
        break;
      case 'spent':
        call?.overspent(message.budget);
        break;
      case 'reach':
        call?.reach(message.harness, message.tool);
        if (message.at !== undefined) call?.options.trace?.entered(message.harness, message.tool, message.depth, message.at);
        break;
      case 'log':
      case 'progress':
        this.report(call, message);
        break;
      case 'resource-updated':
        if (this.onResourceUpdated !== undefined) safelyCall(() => this.onResourceUpdated!(message.harness, message.path));
        break;
      case 'event':
        call?.emitted(message.harness, message.event);
        this.report(call, message);
        break;
    }
  }

  /** To the runner's listener, then to its call's (a call that has ended has none): one report for both, made only when one listens. */
  private report(call: Call | undefined, message: ReportMessage): void {
    const own = call?.options.onReport;
    if (this.onReport === undefined && own === undefined) return;
    const report = reportOf(message);
    if (this.onReport !== undefined) safely(this.onReport, report);
    if (own !== undefined) safely(own, report);
  }
}
