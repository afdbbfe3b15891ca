/**
 * `Call`: one call of `ToolRunner.call` once the runner has accepted it (runner.ts checks the name and
 * the arguments first): its place in its harness's line (fair-queue.ts), its task on a worker (pool.ts),
 * its clock, the two ways it ends early (its time limit, its caller's signal), what it reached, and the
 * error that says why it failed. The runner takes it through its steps: `enter`, then, once what it ran
 * is in, `outcomeOf` or `failureOf`, `end` and `answer`.
 *
 * Every `/mcp` `tools/call` goes through here, so a call makes its callbacks (the queue's, the pool's
 * promise's, the timer's, the signals') in one method, `enter`, whose scope they share, and the strings
 * and maps of what it reached only once there is something to record.
 */
import type { Entry } from './deployed.js';
import type { CallError } from './errors.js';
import type { FairQueue, Turn } from './fair-queue.js';
import type { HostEnvelope } from './host-call.js';
import type { HostTrace } from './http-fetch.js';
import type { TaskPool } from './pool.js';
import { type SignalLike, Stop } from './stop.js';
import type { Barred, GuestOutcome, GuestReport, ProgramPayload, Task, TaskResult, TraceMark } from './worker-messages.js';

/**
 * Who a call is made for: the principal whose request entered the chain (auth/'s `Principal` is one).
 * Host services see its name (a secret may hold one value per principal), and every `berm.call` in the
 * chain runs with its permissions.
 */
export interface Caller {
  readonly name: string;
  mayCall(harness: string): boolean;
  /** True when it may call every harness, so a list shown to it is the whole list, unfiltered. */
  mayCallEvery?(): boolean;
}

/**
 * What a traced call tells as it goes (telemetry/ implements it, made when the call is). Times are epoch
 * milliseconds; those of the guest's instances and nested calls are the worker's, posted back, since a
 * worker shares no trace context with the main thread. A call without one does no tracing work at all.
 */
export interface CallTrace {
  /**
   * Whether what the call does is recorded. False when its trace was not sampled: the call tells nothing
   * of its steps (its worker posts no times for it), and only its context goes on, to what it sends.
   */
  readonly sampled: boolean;
  /** It got a worker at `at`, having waited since the trace was made. */
  started(at: number): void;
  /** An instance of `harness` was made for `tool` at `depth` (0: the called tool) between `from` and `to`. */
  instantiated(harness: string, tool: string, depth: number, from: number, to: number): void;
  /** A `berm.call` at `depth` of `harness`'s `tool` began at `at`. */
  entered(harness: string, tool: string, depth: number, at: number): void;
  /** The `berm.call` at `depth` ended at `at`, with its error's code when it failed. */
  left(depth: number, at: number, error?: string): void;
  /** A host call made now by the innermost call running: how its service traces what it sends. */
  host(name: string): HostTrace;
  /** The call ended, with its error when it failed. */
  ended(error?: CallError): void;
}

/** One `berm.elicit` or `berm.sample` of a call, as its `ask` sees it. */
export interface AskRequest {
  /** The host call's dotted name: `berm.elicit` or `berm.sample`. */
  name: string;
  /** The harness and tool whose instance asks (another than the called one when a `berm.call` ran it). */
  harness: string;
  tool: string;
  /** The guest's request, parsed JSON, unchecked. */
  request: unknown;
  /** Aborted when the call ends, or when the wait for the client must end so the guest can finish within the call's time limit. */
  signal: AbortSignal;
}

/** Answers a call's `berm.elicit` and `berm.sample` by asking the client that made it; a rejection is answered `{"failed": message}`. */
export type CallAsk = (ask: AskRequest) => Promise<HostEnvelope>;

export interface CallOptions {
  /** The principal the call is made for; a call without one is the daemon's own, and may reach any harness. */
  caller?: Caller;
  /** Aborting it ends the call with `cancelled` (terminating the worker if the guest is running): an `AbortSignal`, or a `Stop`. */
  signal?: SignalLike;
  /** Called with this call's reports (its chain's accepted logs and events), after the runner's `onReport` (e.g. to notify the requesting session). */
  onReport?: (report: GuestReport) => void;
  /** Where a traced call tells what it does; unset (tracing off), the call makes no span and no message for one. */
  trace?: CallTrace;
  /** The call's idempotency key (`berm.idempotency_key`, `{idempotency-key}`); its nested calls derive theirs from it. */
  idempotencyKey?: string;
  /** Asks the call's client what a `berm.elicit` or `berm.sample` requests; unset, they are refused (no client can be asked). */
  ask?: CallAsk;
}

/** What one call ran: the tools (the called one and every nested call that started) and accepted events. */
export interface Reached {
  tools: Array<{ harness: string; tool: string }>;
  events: Array<{ harness: string; event: string }>;
}

/** A call's outcome: its value (and the content blocks its envelope carried, checked), or its error; with what it reached. */
export type CallOutcome = ({ ok: unknown; content?: unknown[] } | { error: CallError }) & { reached: Reached };

/**
 * The programs the chain may name in a `berm.call` (each carried program and those it declares, deployed
 * or not) that `caller` may not call; undefined when there is no caller or it may call them all, as with
 * `berm:call`, so such a call allocates nothing here. Declared programs that are not deployed are
 * counted too, so a caller is refused alike whether or not what it may not call is deployed.
 */
export function barredOf(programs: readonly ProgramPayload[], caller: Caller | undefined): Barred | undefined {
  if (caller === undefined) return undefined;
  let barred: Barred | undefined;
  for (let i = 0; i < programs.length; i++) {
    const program = programs[i]!;
    // The called program (the first) was checked by the runner before the call was made.
    if (i > 0) barred = bar(barred, caller, program.name);
    for (const name of program.programs) barred = bar(barred, caller, name);
  }
  return barred;
}

/** `barred`, with `name` added when `caller` may not call it (made only then). */
function bar(barred: Barred | undefined, caller: Caller, name: string): Barred | undefined {
  if (caller.mayCall(name) || barred?.programs.includes(name)) return barred;
  const out = barred ?? { caller: caller.name, programs: [] };
  out.programs.push(name);
  return out;
}

/** The options of the caller's `abort` listener, made once rather than with every call that has a signal. */
const ONCE = { once: true };
/** The options of a call that has ended: none. */
const ENDED: CallOptions = Object.freeze({});
/** What settles a call that has ended: nothing, since it was settled before it ended. */
const IGNORE = (): void => {};

function calls(n: number): string {
  return `${n} call${n === 1 ? '' : 's'}`;
}

export class Call {
  /** Tags its task, and the messages the worker posts while the task runs. */
  readonly id: number;
  /** The harness the call entered through: its time limit applies, and host services see it as the chain's caller. */
  readonly entry: Entry;
  /** The tool called. */
  readonly tool: string;
  /** What the task carries, so forwarded host calls are served with the deploys the worker runs. */
  readonly programs: ProgramPayload[];
  /** Its caller's options, until it ends (`end`). */
  options: CallOptions;
  /** Stops the call: its time limit, its caller's signal, the runner closing (the pool terminates its worker if it runs). */
  readonly stop = new Stop();
  /** What its worker is sent, until it ends. */
  private task?: Task;
  /** When the call was accepted: its clock. */
  private readonly accepted = performance.now();
  /** When it got a worker. */
  private started?: number;
  /** Its place among the calls waiting for, or holding, a worker. */
  private turn?: Turn;
  private timer?: NodeJS.Timeout;
  /** Listens to the caller's signal, when there is one. */
  private onAbort?: () => void;
  private timedOut = false;
  private cancelled = false;
  /** Its budget of log and event bytes, once spent. */
  private spent?: number;
  /** The tools its nested calls reached and the events it emitted, by `harness.name`, once there are any. */
  private tools?: Map<string, { harness: string; tool: string }>;
  private events?: Map<string, { harness: string; event: string }>;
  /** Settle what `enter` answers. */
  private settle!: (result: TaskResult | undefined) => void;
  private fail!: (e: unknown) => void;

  constructor(
    id: number,
    entry: Entry,
    tool: string,
    /** The arguments as JSON text, already validated. */
    args: string,
    programs: ProgramPayload[],
    maxCallDepth: number,
    options: CallOptions,
    /** The export to run in place of the tool's (`Task.export`); `tool` then names it in messages. */
    exportName?: string,
  ) {
    this.id = id;
    this.entry = entry;
    this.tool = tool;
    this.programs = programs;
    this.options = options;
    this.task = {
      callId: id,
      tool,
      export: exportName,
      args,
      programs,
      limits: { maxCallDepth, maxResultBytes: entry.bare.maxResultBytes },
      traced: options.trace?.sampled === true ? true : undefined,
      // The worker runs the whole chain on its own thread and cannot ask the caller, so what it may not
      // reach travels with the task; a harness that does not import berm.call reaches nothing.
      barred: entry.callsOthers ? barredOf(programs, options.caller) : undefined,
      key: options.idempotencyKey,
    };
  }

  /** It waits for a worker (the runner closing stops these; the pool stops the others). */
  get waiting(): boolean {
    return this.turn?.started === false;
  }

  /**
   * Takes its place in its harness's line: undefined when the line is full (nothing else is done), else
   * what it ran, settled with its task's result or with undefined when it stopped before it got a worker.
   * Its clock starts now: a call that waits for a worker spends its own time limit doing so.
   */
  enter(queue: FairQueue, pool: TaskPool<Task, TaskResult>): Promise<TaskResult | undefined> | undefined {
    const ran = new Promise<TaskResult | undefined>((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
    // The task goes to the pool from whatever gives the call its turn: at once, or from the call that frees
    // a worker, which hands it on as soon as its own task's result is in (before that call answers), so the
    // worker does not wait for the freeing call's continuation to run.
    const turn = queue.enter(this.entry.name, this.entry.maxConcurrency, () => {
      if (this.begin())
        pool.run(this.task!, this.stop, this.remainingMs()).then(
          (result) => this.ended(result),
          (e: unknown) => this.broke(e),
        );
    });
    if (turn === undefined) return undefined;
    this.turn = turn;
    this.timer = setTimeout(() => this.expire(), this.entry.callTimeoutMs);
    const signal = this.options.signal;
    if (signal !== undefined) {
      this.onAbort = () => this.cancel();
      signal.addEventListener('abort', this.onAbort, ONCE);
    }
    if (!turn.started) this.stop.addEventListener('abort', () => this.dropped());
    return ran;
  }

  /** Seconds it waited for a worker and ran on one, as of now (undefined: it never got one). */
  timing(): { waited: number; ran: number | undefined } {
    const now = performance.now();
    if (this.started === undefined) return { waited: (now - this.accepted) / 1000, ran: undefined };
    return { waited: (this.started - this.accepted) / 1000, ran: (now - this.started) / 1000 };
  }

  /**
   * Gives back its worker or its place in line, stops its clock and stops listening to its caller; once it
   * is answered. Then it lets go of its task, its caller's options and what settled it, which reach the whole
   * request (its span, its response, the frames waiting on it). V8's young-generation collection keeps
   * whatever an old object points to, dead or alive, until the next full collection; the timer list, the
   * caller's signal and the runner's map of calls each held this call while it ran, so without this the
   * call kept every request's objects through scavenges into the old generation (docs/decisions.md, "A
   * call lets go of its request when it ends").
   */
  end(): void {
    this.turn?.leave();
    clearTimeout(this.timer);
    if (this.onAbort !== undefined) this.options.signal?.removeEventListener('abort', this.onAbort);
    this.options = ENDED;
    this.task = undefined;
    this.onAbort = undefined;
    this.settle = this.fail = IGNORE;
  }

  /** What it ran: the guest's outcome, or why it never got a worker. */
  outcomeOf(result: TaskResult | undefined): GuestOutcome {
    return result === undefined ? { error: this.unstarted() } : result.outcome;
  }

  /** Why its task failed on the way (`closed`: the runner has closed). */
  failureOf(e: unknown, closed: boolean): CallError {
    const label = this.label;
    if (this.timedOut) {
      const waited = Math.round((this.started ?? this.accepted) - this.accepted);
      const queued = waited > 0 ? `, ${waited} ms of it waiting for a worker,` : '';
      const flood =
        this.spent === undefined
          ? ''
          : `; it had sent its ${this.spent} bytes of logs and events, and went on sending after they were refused`;
      return {
        code: 'timeout',
        message: `${label} did not finish within ${this.entry.callTimeoutMs} ms${queued} and was stopped${flood}`,
      };
    }
    if (this.cancelled) return { code: 'cancelled', message: `${label} was cancelled` };
    if (closed) return { code: 'closed', message: `the tool runner closed while ${label} was running` };
    const code = (e as { code?: unknown } | null)?.code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') return { code: 'memory-limit', message: `${label} exhausted its worker's heap` };
    return { code: 'internal', message: `${label} failed in the runtime: ${e instanceof Error ? e.message : String(e)}` };
  }

  /** The answer: its outcome, with the tools and events it reached (the called tool first). */
  answer(outcome: GuestOutcome): CallOutcome {
    const called = { harness: this.entry.name, tool: this.tool };
    const reached: Reached = {
      tools: this.tools === undefined ? [called] : [called, ...this.tools.values()],
      events: this.events === undefined ? [] : [...this.events.values()],
    };
    if (!('ok' in outcome)) return { error: outcome.error, reached };
    return outcome.content === undefined ? { ok: outcome.ok, reached } : { ok: outcome.ok, content: outcome.content, reached };
  }

  /** Milliseconds left of its time limit, counted from its acceptance. */
  remainingMs(): number {
    return this.entry.callTimeoutMs - (performance.now() - this.accepted);
  }

  /** Why it was refused when its harness's line was full. */
  busy(maxQueue: number): CallError {
    return {
      code: 'busy',
      message: `bermd is busy: ${maxQueue} calls of ${this.entry.name} are already waiting for a worker (--max-queue); ${this.label} did not run`,
    };
  }

  /** A nested call reached `harness.tool`. */
  reach(harness: string, tool: string): void {
    // The called tool is always the first reached (`answer`).
    if (harness === this.entry.name && tool === this.tool) return;
    (this.tools ??= new Map()).set(`${harness}.${tool}`, { harness, tool });
  }

  /** Its chain emitted `harness`'s `event`, accepted. */
  emitted(harness: string, event: string): void {
    (this.events ??= new Map()).set(`${harness}.${event}`, { harness, event });
  }

  /** It has sent its `budget` of log and event bytes: what it sends from now on is refused. */
  overspent(budget: number): void {
    this.spent = budget;
  }

  /** Made only for an error message, not with every call. */
  private get label(): string {
    return `${this.entry.name}.${this.tool}`;
  }

  /** Its turn has come: false (and it is settled) when it stopped meanwhile. */
  private begin(): boolean {
    this.started = performance.now();
    this.options.trace?.started(performance.timeOrigin + this.started);
    if (!this.stop.aborted) return true;
    this.settle(undefined);
    return false;
  }

  /** What its worker measured since its previous message (`TraceMark`), told to its trace in order. */
  marked(marks: readonly TraceMark[]): void {
    const trace = this.options.trace;
    if (trace === undefined) return;
    for (const m of marks) {
      if (m.kind === 'instantiated') trace.instantiated(m.harness, m.tool, m.depth, m.from, m.to);
      else trace.left(m.depth, m.at, m.error);
    }
  }

  /** Its task's result is in: its worker goes at once to the next call waiting. */
  private ended(result: TaskResult): void {
    this.turn?.leave();
    if (result.marks !== undefined) this.marked(result.marks);
    this.settle(result);
  }

  private broke(e: unknown): void {
    this.turn?.leave();
    this.fail(e);
  }

  private expire(): void {
    this.timedOut = true;
    this.stop.abort();
  }

  private cancel(): void {
    this.cancelled = true;
    this.stop.abort();
  }

  /** Stopped while it waited for a worker: it never runs. */
  private dropped(): void {
    if (!this.turn!.started) this.settle(undefined);
  }

  /** Why a call that waited for a worker never got one. */
  private unstarted(): CallError {
    const label = this.label;
    const waited = Math.round(performance.now() - this.accepted);
    if (this.timedOut) {
      const ahead = this.turn?.ahead ?? 0;
      return {
        code: 'timeout',
        message:
          `${label} waited ${waited} ms for a worker, its whole time limit of ${this.entry.callTimeoutMs} ms, and never ran ` +
          `(${this.entry.name} runs at most ${calls(this.entry.maxConcurrency)} at once; ${ahead} of its calls were waiting ahead of this one)`,
      };
    }
    if (this.cancelled) return { code: 'cancelled', message: `${label} was cancelled while it waited for a worker; it never ran` };
    return { code: 'closed', message: `the tool runner closed while ${label} waited for a worker; it never ran` };
  }
}
