/**
 * `ToolRunner`: calls a deployed harness's tools, each call in a fresh instance on a worker thread.
 *
 * Guest code never runs on the main thread: a pool of worker threads (pool.ts) runs each call, and a
 * call that outlives `callTimeoutMs` is stopped, which makes the pool terminate that worker (the only way
 * to stop a guest spinning in a loop) while the other workers keep serving. Which call gets a worker is
 * decided here, fairly between harnesses (fair-queue.ts); the pool is handed only calls that may run.
 * A call's clock starts when it is accepted, so time spent waiting for a worker counts against its limit.
 *
 * How modules reach the workers: every task carries the `WebAssembly.Module`s it may need (the called
 * harness, plus, when it imports `berm.call`, each deployed program its calls can reach within the depth
 * limit). Cloning a module to a worker shares V8's compiled code rather than copying it: a task carrying a
 * module costs the same as one carrying only a digest, within noise (bench/runtime.js prints both every
 * run), so a per-worker module cache would add a miss protocol and invalidation for no gain. What is costly to rebuild, the validators, is cached per
 * worker under a key unique to each deploy (chain.ts); their source travels only with tasks that can
 * use them (a harness that imports `berm.call` or `berm.emit`, and the programs it can reach).
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_LIMITS, DEFAULT_MAX_CALL_DEPTH, DEFAULT_MAX_QUEUE, workersFor } from '../limits.js';
import { DeployedSet, type Entry, type HarnessInput, PreparedHarness, positiveInteger, prepareHarness } from './deployed.js';
import { RunnerError, type CallError } from './errors.js';
import { FairQueue, type Turn } from './fair-queue.js';
import { WorkerPool } from './pool.js';
import type { HostEnvelope } from './host-call.js';
import { answerWorker, type HostService } from './http-fetch.js';
import { capMemory } from './memory-cap.js';
import { violation } from './schema-issues.js';
import { type SignalLike, Stop } from './stop.js';
import type { GuestOutcome, ProgramPayload, Task, TaskResult, WorkerMessage } from './worker-messages.js';

export const DEFAULT_CALL_TIMEOUT_MS = DEFAULT_LIMITS.timeout_ms;
export const DEFAULT_MAX_MEMORY_BYTES = DEFAULT_LIMITS.max_memory_bytes;
export const DEFAULT_MAX_RESULT_BYTES = DEFAULT_LIMITS.max_result_bytes;
export const DEFAULT_MAX_CONCURRENCY = DEFAULT_LIMITS.max_concurrency;
export { DEFAULT_MAX_CALL_DEPTH, DEFAULT_MAX_QUEUE };

/** A `berm.log` line, tagged with the harness and tool whose instance wrote it. */
export interface GuestLogEntry {
  harness: string;
  tool: string;
  level: string;
  message: string;
}

export type EventHandler = (harness: string, event: string, fields: unknown) => void;

/** An accepted `berm.emit`, with the tool whose instance emitted it. */
export interface EmittedEvent {
  harness: string;
  tool: string;
  event: string;
  fields: unknown;
}

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
  /** Receives every accepted `berm.log`. */
  log?: (entry: GuestLogEntry) => void;
  /** Receives every accepted `berm.emit`, with the harness that emitted it. */
  onEvent?: EventHandler;
  /** Services for the host calls a worker forwards to the main thread (`berm.http.fetch`, ...), by dotted name; a name without one is refused. */
  hostServices?: ReadonlyMap<string, HostService>;
}

/** What one call ran: the tools (the called one and every nested call that started) and accepted events. */
export interface Reached {
  tools: Array<{ harness: string; tool: string }>;
  events: Array<{ harness: string; event: string }>;
}

export type CallOutcome = ({ ok: unknown } | { error: CallError }) & { reached: Reached };

export interface CallOptions {
  /** Aborting it ends the call with `cancelled` (terminating the worker if the guest is running): an `AbortSignal`, or a `Stop`. */
  signal?: SignalLike;
  /** Called for this call's `berm.log` lines, besides the runner's `log`. */
  onLog?: (entry: GuestLogEntry) => void;
  /** Called for this call's events, besides the runner's `onEvent` (e.g. to notify the requesting session). */
  onEvent?: EventHandler;
  /** Like `onEvent`, with the tool that emitted the event. */
  onEmit?: (event: EmittedEvent) => void;
}

interface CallState {
  /** The harness the call entered through: its time limit applies, and host services see it as the chain's caller. */
  entry: Entry;
  /** The tool called. */
  tool: string;
  /** What the task carries, so forwarded host calls are served with the deploys the worker runs. */
  programs: ProgramPayload[];
  timer?: NodeJS.Timeout;
  /** When the call was accepted: its clock. */
  accepted: number;
  /** When it got a worker. */
  started?: number;
  /** Its place among the calls waiting for, or holding, a worker. */
  turn?: Turn;
  /** Stops the call: its time limit, its caller's signal, the runner closing (the pool terminates its worker if it runs). */
  controller: Stop;
  timedOut: boolean;
  cancelled: boolean;
  /** Its budget of log and event bytes, once spent. */
  spent?: number;
  /** The tools its nested calls reached and the events it emitted, by `harness.name`, once there are any. */
  tools?: Map<string, { harness: string; tool: string }>;
  events?: Map<string, { harness: string; event: string }>;
  options: CallOptions;
}

/** The built worker script's path: next to this module in `dist/`, or, when sources are run directly, in the build. */
function workerScript(): string {
  const here = fileURLToPath(new URL('./worker.js', import.meta.url));
  if (existsSync(here)) return here;
  const built = here.replace(/[\\/]src[\\/]runtime[\\/]worker\.js$/, `${sep}dist${sep}runtime${sep}worker.js`);
  if (built !== here && existsSync(built)) return built;
  throw new RunnerError('bad-option', `the runtime's worker script is missing (${here}): build bermd first`);
}

/** The fewest workers kept when the limits ask for fewer: half the cores. */
const DEFAULT_MIN_THREADS = Math.max(1, Math.floor(os.availableParallelism() / 2));

/** What a call that never ran reached: nothing (made only then, not for every call). */
function none(): Reached {
  return { tools: [], events: [] };
}

function calls(n: number): string {
  return `${n} call${n === 1 ? '' : 's'}`;
}

function safely(fn: () => void): void {
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
  private readonly pool: WorkerPool<Task, TaskResult>;
  private readonly queue: FairQueue;
  private readonly deployed: DeployedSet;
  private readonly calls = new Map<number, CallState>();
  private readonly log?: (entry: GuestLogEntry) => void;
  private readonly onEvent?: EventHandler;
  private readonly hostServices: ReadonlyMap<string, HostService>;
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
    this.log = options.log;
    this.onEvent = options.onEvent;
    this.hostServices = options.hostServices ?? new Map();
    this.pool = new WorkerPool<Task, TaskResult>({
      filename: workerScript(),
      // Kept alive even when idle: enough for a harness at its limit and one call of another, so a worker
      // terminated under a runaway call is replaced at once rather than when the next call needs it.
      min: Math.min(threads.min ?? Math.max(this.maxConcurrency + 1, DEFAULT_MIN_THREADS), this.workers),
      max: this.workers,
      // A worker above the minimum that ended as soon as it idled would make a daemon's bursts pay a thread
      // start (tens of ms) each time.
      idleTimeoutMs: 30_000,
      onMessage: (message) => this.onWorkerMessage(message as WorkerMessage),
    });
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

  /** The digest `name` was deployed with, if it is. */
  digestOf(name: string): string | undefined {
    return this.deployed.get(name)?.digest;
  }

  /** Runs `harness`'s `tool` with `args` (a JSON value; undefined means `{}`). Never rejects: failures are outcomes. */
  async call(harness: string, tool: string, args: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    if (this.closed) return { error: { code: 'closed', message: 'the tool runner is closed' }, reached: none() };
    const entry = this.deployed.get(harness);
    if (entry === undefined) return { error: { code: 'unknown-harness', message: `no harness "${harness}" is deployed` }, reached: none() };
    const check = entry.validators.tools.get(tool);
    if (check === undefined)
      return { error: { code: 'unknown-tool', message: `harness "${harness}" has no tool "${tool}"` }, reached: none() };
    const value = args === undefined ? {} : args;
    let text: string;
    try {
      text = JSON.stringify(value);
    } catch (e) {
      return {
        error: { code: 'invalid-arguments', message: `${harness}.${tool}: arguments are not JSON (${(e as Error).message})`, path: '' },
        reached: none(),
      };
    }
    const problem = violation(check, 'argument', value);
    if (problem !== undefined) {
      return {
        error: { code: 'invalid-arguments', message: `${harness}.${tool}: ${problem.message}`, path: problem.path },
        reached: none(),
      };
    }
    if (options.signal?.aborted)
      return { error: { code: 'cancelled', message: `${harness}.${tool} was cancelled before it started` }, reached: none() };

    const label = `${harness}.${tool}`;
    const callId = this.nextCallId++;
    const programs = this.deployed.programsFor(entry);
    const state: CallState = {
      entry,
      tool,
      programs,
      accepted: performance.now(),
      controller: new Stop(),
      timedOut: false,
      cancelled: false,
      options,
    };
    const task: Task = {
      callId,
      tool,
      args: text,
      programs,
      limits: { maxCallDepth: this.maxCallDepth, maxResultBytes: entry.bare.maxResultBytes },
    };
    // Settled with the task's result, or with undefined when the call stopped before it got a worker.
    let settle!: (result: TaskResult | undefined) => void;
    let fail!: (e: unknown) => void;
    const ran = new Promise<TaskResult | undefined>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    let turn: Turn | undefined;
    // The task goes to the pool from whatever gives the call its turn: at once, or from the call that frees
    // a worker, which hands it on as soon as its own task's result is in (before that call answers), so the
    // worker does not wait for the freeing call's continuation to run.
    const start = (): void => {
      state.started = performance.now();
      if (state.controller.aborted) {
        settle(undefined);
        return;
      }
      this.pool.run(task, state.controller).then(
        (result) => {
          turn?.leave();
          settle(result);
        },
        (e: unknown) => {
          turn?.leave();
          fail(e);
        },
      );
    };
    this.calls.set(callId, state);
    turn = this.queue.enter(harness, entry.maxConcurrency, start);
    if (turn === undefined) {
      this.calls.delete(callId);
      return {
        error: {
          code: 'busy',
          message: `bermd is busy: ${this.maxQueue} calls of ${harness} are already waiting for a worker (--max-queue); ${label} did not run`,
        },
        reached: none(),
      };
    }
    state.turn = turn;
    // The clock starts now: a call that waits for a worker spends its own time limit doing so.
    state.timer = setTimeout(() => {
      state.timedOut = true;
      state.controller.abort();
    }, entry.callTimeoutMs);
    const onAbort = (): void => {
      state.cancelled = true;
      state.controller.abort();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (!turn.started) {
      const waiting = turn;
      state.controller.addEventListener('abort', () => {
        if (!waiting.started) settle(undefined);
      });
    }
    let outcome: GuestOutcome;
    try {
      const result = await ran;
      if (result === undefined) {
        outcome = { error: this.unstarted(state, label) };
      } else {
        outcome = result.outcome;
      }
    } catch (e) {
      outcome = { error: this.failureOf(e, state, label) };
    } finally {
      turn.leave();
      clearTimeout(state.timer);
      options.signal?.removeEventListener('abort', onAbort);
      this.calls.delete(callId);
    }
    const reached: Reached = {
      tools: state.tools === undefined ? [{ harness, tool }] : [{ harness, tool }, ...state.tools.values()],
      events: state.events === undefined ? [] : [...state.events.values()],
    };
    return 'ok' in outcome ? { ok: outcome.ok, reached } : { error: outcome.error, reached };
  }

  /** Stops every worker; calls still running or waiting end with `closed`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const state of this.calls.values()) if (state.turn?.started === false) state.controller.abort();
    await this.pool.destroy();
  }

  /** Why a call that waited for a worker never got one. */
  private unstarted(state: CallState, label: string): CallError {
    const waited = Math.round(performance.now() - state.accepted);
    if (state.timedOut) {
      const ahead = state.turn?.ahead ?? 0;
      return {
        code: 'timeout',
        message:
          `${label} waited ${waited} ms for a worker, its whole time limit of ${state.entry.callTimeoutMs} ms, and never ran ` +
          `(${state.entry.name} runs at most ${calls(state.entry.maxConcurrency)} at once; ${ahead} of its calls were waiting ahead of this one)`,
      };
    }
    if (state.cancelled) return { code: 'cancelled', message: `${label} was cancelled while it waited for a worker; it never ran` };
    return { code: 'closed', message: `the tool runner closed while ${label} waited for a worker; it never ran` };
  }

  private failureOf(e: unknown, state: CallState, label: string): CallError {
    if (state.timedOut) {
      const waited = Math.round((state.started ?? state.accepted) - state.accepted);
      const queued = waited > 0 ? `, ${waited} ms of it waiting for a worker,` : '';
      const flood =
        state.spent === undefined
          ? ''
          : `; it had sent its ${state.spent} bytes of logs and events, and went on sending after they were refused`;
      return {
        code: 'timeout',
        message: `${label} did not finish within ${state.entry.callTimeoutMs} ms${queued} and was stopped${flood}`,
      };
    }
    if (state.cancelled) return { code: 'cancelled', message: `${label} was cancelled` };
    if (this.closed) return { code: 'closed', message: `the tool runner closed while ${label} was running` };
    const code = (e as { code?: unknown } | null)?.code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') return { code: 'memory-limit', message: `${label} exhausted its worker's heap` };
    return { code: 'internal', message: `${label} failed in the runtime: ${e instanceof Error ? e.message : String(e)}` };
  }

  /** Runs a forwarded host call's service and wakes the waiting worker with its envelope (http-fetch.ts). */
  private serveHost(state: CallState | undefined, message: Extract<WorkerMessage, { kind: 'host' }>): void {
    const { reply, flag, name } = message;
    const service = this.hostServices.get(name);
    if (state === undefined || state.controller.aborted) {
      answerWorker(reply, flag, { refused: `${name}: the call has ended` });
      return;
    }
    if (service === undefined) {
      answerWorker(reply, flag, { refused: `${name} is not served by this host` });
      return;
    }
    const payload = state.programs.find((p) => p.name === message.harness);
    const owner = payload === undefined ? undefined : this.deployed.ownerOf(payload);
    let answered: Promise<HostEnvelope>;
    try {
      answered = service({
        name,
        harness: message.harness,
        tool: message.tool,
        entry: state.entry.name,
        context: owner?.context,
        request: message.request,
        signal: state.controller.signal,
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
    const state = this.calls.get(message.callId);
    switch (message.kind) {
      case 'host':
        this.serveHost(state, message);
        break;
      case 'spent':
        if (state !== undefined) state.spent = message.budget;
        break;
      case 'reach': {
        if (state === undefined) break;
        const key = `${message.harness}.${message.tool}`;
        // The called tool itself is reported first, always (see `call`).
        if (message.harness === state.entry.name && message.tool === state.tool) break;
        (state.tools ??= new Map()).set(key, { harness: message.harness, tool: message.tool });
        break;
      }
      case 'log': {
        const entry: GuestLogEntry = { harness: message.harness, tool: message.tool, level: message.level, message: message.message };
        if (this.log !== undefined) safely(() => this.log!(entry));
        if (state?.options.onLog !== undefined) safely(() => state.options.onLog!(entry));
        break;
      }
      case 'event':
        if (state !== undefined)
          (state.events ??= new Map()).set(`${message.harness}.${message.event}`, { harness: message.harness, event: message.event });
        if (this.onEvent !== undefined) safely(() => this.onEvent!(message.harness, message.event, message.fields));
        if (state?.options.onEvent !== undefined) safely(() => state.options.onEvent!(message.harness, message.event, message.fields));
        if (state?.options.onEmit !== undefined) {
          const emitted: EmittedEvent = { harness: message.harness, tool: message.tool, event: message.event, fields: message.fields };
          safely(() => state.options.onEmit!(emitted));
        }
        break;
    }
  }
}
