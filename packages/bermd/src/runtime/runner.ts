/**
 * `ToolRunner`: calls a deployed harness's tools, each call in a fresh instance on a worker thread.
 *
 * Guest code never runs on the main thread: a pool of worker threads (piscina) runs each call, and a
 * call that outlives `callTimeoutMs` is aborted, which makes piscina terminate that worker (the only way
 * to stop a guest spinning in a loop) while the other workers keep serving.
 *
 * How modules reach the workers: every task carries the `WebAssembly.Module`s it may need (the called
 * harness, plus, when it imports `berm.call`, each deployed program its calls can reach within the depth
 * limit). Cloning a module to a worker shares V8's compiled code rather than copying it; measured with
 * piscina on this project's 2-core machine (bench/runtime.js prints both every run), a task carrying a
 * module costs the same as one carrying only a digest (~25 µs per round trip either way, within noise),
 * so a per-worker module cache would add a miss protocol and invalidation for no gain. What is costly to rebuild, the validators, is cached per
 * worker under a key unique to each deploy (chain.ts); their source travels only with tasks that can
 * use them (a harness that imports `berm.call` or `berm.emit`, and the programs it can reach).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ManifestData } from '@berm/manifest';
import { RunnerError, type CallError } from './errors.js';
import { answerWorker, type HostService } from './http-fetch.js';
import { capMemory } from './memory-cap.js';
import type { HostEnvelope } from './host-calls.js';
import type { GuestOutcome, ProgramPayload, Task, TaskResult, WorkerMessage } from './protocol.js';
import { violation } from './schema-issues.js';
import { compileValidators, type HarnessValidators } from './validators.js';

export const DEFAULT_CALL_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_MEMORY_BYTES = 64 * 1024 * 1024;
/**
 * 1 MiB: a result is JSON text a model will read, so anything near this size is already far past what
 * is useful in a context window, while the host holds it several times over (guest memory, decoded
 * string, parsed value, the MCP response). The same bound applies to one host-call request.
 */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_CALL_DEPTH = 4;

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
  /** Wall-clock limit of one call, nested calls included, from the moment a worker starts it. */
  callTimeoutMs?: number;
  /** The most memory one guest instance may have; see `capMemory`. */
  maxMemoryBytes?: number;
  /** The longest result envelope (and host-call request) read from a guest; also the bytes of logs and events one call may send. */
  maxResultBytes?: number;
  /** How deep `berm.call` may nest; 0 refuses the first nested call. */
  maxCallDepth?: number;
  /** Worker threads: a fixed count, or piscina's bounds. Default: piscina's (from the CPU count). */
  threads?: number | { min?: number; max?: number };
  /** Receives every accepted `berm.log`. */
  log?: (entry: GuestLogEntry) => void;
  /** Receives every accepted `berm.emit`, with the harness that emitted it. */
  onEvent?: EventHandler;
  /** Services for the host calls a worker forwards to the main thread (`berm.http.fetch`, ...), by dotted name; a name without one is refused. */
  hostServices?: ReadonlyMap<string, HostService>;
}

/** A harness's own limits, below the runner's (which apply when these are unset). */
export interface HarnessLimits {
  /** Wall-clock limit of a call that enters through this harness, its nested calls included. */
  callTimeoutMs?: number;
  /** The longest result (and host-call request) read from this harness's instances, wherever in a chain they run. */
  maxResultBytes?: number;
}

export interface HarnessInput {
  /** Compiled from bytes that went through `capMemory` (or `ToolRunner.compile`, which does both). */
  module: WebAssembly.Module;
  manifest: ManifestData;
  digest: string;
  limits?: HarnessLimits;
  /** Anything the deployer wants its host services to see for this harness (e.g. what it is granted); never sent to a worker. */
  context?: unknown;
}

/** What one call ran: the tools (the called one and every nested call that started) and accepted events. */
export interface Reached {
  tools: Array<{ harness: string; tool: string }>;
  events: Array<{ harness: string; event: string }>;
}

export type CallOutcome = ({ ok: unknown } | { error: CallError }) & { reached: Reached };

export interface CallOptions {
  /** Aborting it ends the call with `cancelled` (terminating the worker if the guest is running). */
  signal?: AbortSignal;
  /** Called for this call's `berm.log` lines, besides the runner's `log`. */
  onLog?: (entry: GuestLogEntry) => void;
  /** Called for this call's events, besides the runner's `onEvent` (e.g. to notify the requesting session). */
  onEvent?: EventHandler;
  /** Like `onEvent`, with the tool that emitted the event. */
  onEmit?: (event: EmittedEvent) => void;
}

/** A harness checked and with its validators compiled, ready for `setHarness` (which then cannot fail). */
export class PreparedHarness {
  constructor(
    readonly input: HarnessInput,
    readonly validators: HarnessValidators,
    /** It imports `berm.call`: its tasks carry the programs within reach. */
    readonly callsOthers: boolean,
    /** It imports `berm.emit`: its tasks carry its event validators. */
    readonly emits: boolean,
  ) {}
}

interface Entry {
  name: string;
  digest: string;
  manifest: ManifestData;
  validators: HarnessValidators;
  /** Without validator source: for a harness whose instance never validates anything in the worker. */
  bare: ProgramPayload;
  /** With validator source: for nested-call targets and harnesses that emit or call. */
  full: ProgramPayload;
  callsOthers: boolean;
  needsChecks: boolean;
  callTimeoutMs: number;
  context: unknown;
}

interface CallState {
  /** The harness the call entered through: its time limit applies, and host services see it as the chain's caller. */
  entry: Entry;
  /** What the task carries, so forwarded host calls are served with the deploys the worker runs. */
  programs: ProgramPayload[];
  timer?: NodeJS.Timeout;
  controller: AbortController;
  timedOut: boolean;
  cancelled: boolean;
  received: number;
  expected: number;
  drained?: () => void;
  tools: Map<string, { harness: string; tool: string }>;
  events: Map<string, { harness: string; event: string }>;
  options: CallOptions;
}

function positiveInteger(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) throw new RunnerError('bad-option', `${name} must be an integer of at least ${min}, not ${value}`);
  return value;
}

/** The built worker script: next to this module in `dist/`, or, when sources are run directly, in the build. */
function workerScript(): string {
  const here = new URL('./worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here.href;
  const built = new URL(here.href.replace(/\/src\/runtime\/worker\.js$/, '/dist/runtime/worker.js'));
  if (existsSync(fileURLToPath(built))) return built.href;
  throw new RunnerError('bad-option', `the runtime's worker script is missing (${fileURLToPath(here)}): build bermd first`);
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
  private readonly pool: Piscina<Task, TaskResult>;
  private readonly entries = new Map<string, Entry>();
  private readonly calls = new Map<number, CallState>();
  /** The programs each harness can reach, recomputed after any deploy or undeploy. */
  private readonly closures = new Map<string, ProgramPayload[]>();
  private readonly log?: (entry: GuestLogEntry) => void;
  private readonly onEvent?: EventHandler;
  private readonly hostServices: ReadonlyMap<string, HostService>;
  /** The entry each payload was built for; weak, so a replaced deploy goes once no call holds its payloads. */
  private readonly owners = new WeakMap<ProgramPayload, Entry>();
  private nextCallId = 1;
  private nextKey = 1;
  private closed = false;

  constructor(options: RunnerOptions = {}) {
    this.callTimeoutMs = positiveInteger('callTimeoutMs', options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, 1);
    this.maxMemoryBytes = positiveInteger('maxMemoryBytes', options.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES, 65536);
    this.maxResultBytes = positiveInteger('maxResultBytes', options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES, 1);
    this.maxCallDepth = positiveInteger('maxCallDepth', options.maxCallDepth ?? DEFAULT_MAX_CALL_DEPTH, 0);
    this.log = options.log;
    this.onEvent = options.onEvent;
    this.hostServices = options.hostServices ?? new Map();
    const threads = typeof options.threads === 'number' ? { min: options.threads, max: options.threads } : (options.threads ?? {});
    if (threads.min !== undefined) positiveInteger('threads.min', threads.min, 1);
    if (threads.max !== undefined) positiveInteger('threads.max', threads.max, 1);
    this.pool = new Piscina<Task, TaskResult>({
      filename: workerScript(),
      ...(threads.min !== undefined ? { minThreads: threads.min } : {}),
      ...(threads.max !== undefined ? { maxThreads: threads.max } : {}),
      // Piscina's default (0) ends a worker above minThreads as soon as it idles; a daemon's bursts
      // would then pay a thread start (tens of ms) each time.
      idleTimeout: 30_000,
    });
    this.pool.on('message', (message: WorkerMessage) => this.onWorkerMessage(message));
    // Worker crashes surface as the failed task's rejection; the pool's own event needs a listener so it is not thrown.
    this.pool.on('error', () => {});
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
    const { module, manifest } = harness;
    const exported = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
    for (const tool of manifest.tools) {
      if (!exported.has(`berm_tool_${tool.name}`)) throw new RunnerError('bad-harness', `tool "${tool.name}" has no export berm_tool_${tool.name}`, tool.name);
    }
    const imported = new Set(WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}`));
    return new PreparedHarness(harness, compileValidators(manifest), imported.has('berm.call'), imported.has('berm.emit'));
  }

  /**
   * Deploys (or replaces) `name`, from a `prepareHarness` result or from the parts (then prepared here,
   * throwing as `prepareHarness` does, with the deployed set unchanged). Calls already running finish
   * with the harness they started with.
   */
  setHarness(name: string, harness: HarnessInput | PreparedHarness): void {
    if (this.closed) throw new RunnerError('closed', 'the tool runner is closed');
    const prepared = harness instanceof PreparedHarness ? harness : this.prepareHarness(harness);
    const { module, manifest, digest, limits = {} } = prepared.input;
    const callTimeoutMs = positiveInteger('limits.callTimeoutMs', limits.callTimeoutMs ?? this.callTimeoutMs, 1);
    const maxResultBytes = positiveInteger('limits.maxResultBytes', limits.maxResultBytes ?? this.maxResultBytes, 1);
    const bare: ProgramPayload = {
      name,
      key: this.nextKey++,
      module,
      tools: manifest.tools.map((t) => t.name),
      events: manifest.events.map((e) => e.name),
      programs: [...(manifest.deps?.programs ?? [])],
      validators: '',
      maxResultBytes,
    };
    const entry: Entry = {
      name,
      digest,
      manifest,
      validators: prepared.validators,
      bare,
      full: { ...bare, validators: prepared.validators.source },
      callsOthers: prepared.callsOthers,
      needsChecks: prepared.callsOthers || prepared.emits,
      callTimeoutMs,
      context: prepared.input.context,
    };
    this.owners.set(entry.bare, entry);
    this.owners.set(entry.full, entry);
    this.entries.set(name, entry);
    this.closures.clear();
  }

  /** Undeploys `name`; true when it was deployed. Calls already running finish. */
  removeHarness(name: string): boolean {
    const removed = this.entries.delete(name);
    if (removed) this.closures.clear();
    return removed;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The digest `name` was deployed with, if it is. */
  digestOf(name: string): string | undefined {
    return this.entries.get(name)?.digest;
  }

  /** Runs `harness`'s `tool` with `args` (a JSON value; undefined means `{}`). Never rejects: failures are outcomes. */
  async call(harness: string, tool: string, args: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    const none: Reached = { tools: [], events: [] };
    if (this.closed) return { error: { code: 'closed', message: 'the tool runner is closed' }, reached: none };
    const entry = this.entries.get(harness);
    if (entry === undefined) return { error: { code: 'unknown-harness', message: `no harness "${harness}" is deployed` }, reached: none };
    const check = entry.validators.tools.get(tool);
    if (check === undefined) return { error: { code: 'unknown-tool', message: `harness "${harness}" has no tool "${tool}"` }, reached: none };
    const value = args === undefined ? {} : args;
    let text: string;
    try {
      text = JSON.stringify(value);
    } catch (e) {
      return { error: { code: 'invalid-arguments', message: `${harness}.${tool}: arguments are not JSON (${(e as Error).message})`, path: '' }, reached: none };
    }
    const problem = violation(check, 'argument', value);
    if (problem !== undefined) {
      return { error: { code: 'invalid-arguments', message: `${harness}.${tool}: ${problem.message}`, path: problem.path }, reached: none };
    }
    if (options.signal?.aborted) return { error: { code: 'cancelled', message: `${harness}.${tool} was cancelled before it started` }, reached: none };

    const callId = this.nextCallId++;
    const programs = this.programsFor(entry);
    const state: CallState = {
      entry,
      programs,
      controller: new AbortController(),
      timedOut: false,
      cancelled: false,
      received: 0,
      expected: Number.POSITIVE_INFINITY,
      tools: new Map([[`${harness}.${tool}`, { harness, tool }]]),
      events: new Map(),
      options,
    };
    const onAbort = (): void => {
      state.cancelled = true;
      state.controller.abort();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    this.calls.set(callId, state);
    const task: Task = {
      callId,
      tool,
      args: text,
      programs,
      limits: { maxCallDepth: this.maxCallDepth, maxResultBytes: entry.bare.maxResultBytes },
    };
    let outcome: GuestOutcome;
    try {
      const result = await this.pool.run(task, { signal: state.controller.signal });
      state.expected = result.posted;
      if (state.received < state.expected) await new Promise<void>((resolve) => (state.drained = resolve));
      outcome = result.outcome;
    } catch (e) {
      outcome = { error: this.failureOf(e, state, `${harness}.${tool}`) };
    } finally {
      clearTimeout(state.timer);
      options.signal?.removeEventListener('abort', onAbort);
      this.calls.delete(callId);
    }
    return { ...outcome, reached: { tools: [...state.tools.values()], events: [...state.events.values()] } };
  }

  /** Stops every worker; calls still running end with `closed`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.destroy();
  }

  private failureOf(e: unknown, state: CallState, label: string): CallError {
    if (state.timedOut) return { code: 'timeout', message: `${label} did not finish within ${state.entry.callTimeoutMs} ms and was stopped` };
    if (state.cancelled) return { code: 'cancelled', message: `${label} was cancelled` };
    if (this.closed) return { code: 'closed', message: `the tool runner closed while ${label} was running` };
    const code = (e as { code?: unknown } | null)?.code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') return { code: 'memory-limit', message: `${label} exhausted its worker's heap` };
    return { code: 'internal', message: `${label} failed in the runtime: ${e instanceof Error ? e.message : String(e)}` };
  }

  /** The called harness first, then (only if it can call) every deployed program within reach of the depth limit. */
  private programsFor(entry: Entry): ProgramPayload[] {
    if (!entry.callsOthers) return [entry.needsChecks ? entry.full : entry.bare];
    let programs = this.closures.get(entry.name);
    if (programs !== undefined) return programs;
    const seen = new Set([entry.name]);
    programs = [entry.full];
    let frontier = [entry];
    for (let depth = 1; depth <= this.maxCallDepth && frontier.length > 0; depth++) {
      const next: Entry[] = [];
      for (const from of frontier) {
        if (!from.callsOthers) continue;
        for (const name of from.bare.programs) {
          const target = this.entries.get(name);
          if (target === undefined || seen.has(name)) continue;
          seen.add(name);
          programs.push(target.full);
          next.push(target);
        }
      }
      frontier = next;
    }
    this.closures.set(entry.name, programs);
    return programs;
  }

  /** Runs a forwarded host call's service and wakes the waiting worker with its envelope (http-fetch.ts). */
  private serveHost(state: CallState | undefined, message: Extract<WorkerMessage, { kind: 'host' }>): void {
    const { reply, flag, name } = message;
    const service = this.hostServices.get(name);
    if (state === undefined || state.controller.signal.aborted) {
      answerWorker(reply, flag, { refused: `${name}: the call has ended` });
      return;
    }
    if (service === undefined) {
      answerWorker(reply, flag, { refused: `${name} is not served by this host` });
      return;
    }
    const payload = state.programs.find((p) => p.name === message.harness);
    const owner = payload === undefined ? undefined : this.owners.get(payload);
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
      case 'start':
        if (state !== undefined) {
          state.timer = setTimeout(() => {
            state.timedOut = true;
            state.controller.abort();
          }, state.entry.callTimeoutMs);
        }
        break;
      case 'host':
        this.serveHost(state, message);
        break;
      case 'reach':
        state?.tools.set(`${message.harness}.${message.tool}`, { harness: message.harness, tool: message.tool });
        break;
      case 'log': {
        const entry: GuestLogEntry = { harness: message.harness, tool: message.tool, level: message.level, message: message.message };
        if (this.log !== undefined) safely(() => this.log!(entry));
        if (state?.options.onLog !== undefined) safely(() => state.options.onLog!(entry));
        break;
      }
      case 'event':
        state?.events.set(`${message.harness}.${message.event}`, { harness: message.harness, event: message.event });
        if (this.onEvent !== undefined) safely(() => this.onEvent!(message.harness, message.event, message.fields));
        if (state?.options.onEvent !== undefined) safely(() => state.options.onEvent!(message.harness, message.event, message.fields));
        if (state?.options.onEmit !== undefined) {
          const emitted: EmittedEvent = { harness: message.harness, tool: message.tool, event: message.event, fields: message.fields };
          safely(() => state.options.onEmit!(emitted));
        }
        break;
    }
    if (state !== undefined && ++state.received >= state.expected) state.drained?.();
  }
}
