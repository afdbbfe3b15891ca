/**
 * One call as a worker runs it: the called tool and every `berm.call` it makes, each in a fresh instance,
 * all synchronously on this worker's thread. Nested calls never wait for another worker, so a bounded
 * pool cannot deadlock, and the call's time limit (enforced by the runner terminating this thread)
 * covers the whole chain.
 */
import { createRequire } from 'node:module';
import type { TransferListItem } from 'node:worker_threads';
import type { CallError } from './errors.js';
import {
  AbiViolation,
  encodeText,
  isPlainObject,
  memorySize,
  pack,
  parseJson,
  readGuest,
  unpack,
  writeGuest,
  type GuestPort,
} from './guest-memory.js';
import type { CallChain, ChainProgram, HostCall, HostCallContext, HostEnvelope, WorkerMessageBody } from './host-call.js';
import { contentProblem } from './content.js';
import { HOST_CALLS } from './host-calls.js';
import { violation, type Check } from './schema-issues.js';
import type { Barred, GuestOutcome, ProgramPayload, TaskLimits, TraceMark, WorkerMessage } from './worker-messages.js';

/** What a worker keeps about a deployed program between tasks: derived once, keyed by the deploy's key. */
interface ProgramFacts {
  imports: WebAssembly.ModuleImportDescriptor[];
  checks?: Record<string, Check>;
}

const require = createRequire(import.meta.url);
const CACHE_LIMIT = 128;
const cache = new Map<number, ProgramFacts>();

function factsFor(payload: ProgramPayload): ProgramFacts {
  let facts = cache.get(payload.key);
  if (facts !== undefined) {
    // Re-inserting keeps the Map's order least-recently-used first.
    cache.delete(payload.key);
  } else {
    facts = { imports: WebAssembly.Module.imports(payload.module) };
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  }
  cache.set(payload.key, facts);
  return facts;
}

/** Evaluates the standalone validator module compiled on the main thread (validators.ts). */
function loadChecks(source: string): Record<string, Check> {
  const module = { exports: {} as Record<string, Check> };
  new Function('module', 'exports', 'require', source)(module, module.exports, require);
  return module.exports;
}

export class LoadedProgram implements ChainProgram {
  readonly name: string;
  readonly payload: ProgramPayload;
  readonly facts: ProgramFacts;

  constructor(payload: ProgramPayload) {
    this.name = payload.name;
    this.payload = payload;
    this.facts = factsFor(payload);
  }

  check(prefix: 't' | 'e', index: number): Check {
    if (this.facts.checks === undefined) {
      if (this.payload.validators === '') throw new Error(`no validators were sent for "${this.name}"`);
      this.facts.checks = loadChecks(this.payload.validators);
    }
    const check = this.facts.checks[`${prefix}${index}`];
    if (check === undefined) throw new Error(`no validator ${prefix}${index} for "${this.name}"`);
    return check;
  }
}

/**
 * After a trap, whether the guest's memory could grow no further: a guest whose `memory.grow` was refused
 * at its cap typically traps next (an allocator giving up), and its caller should hear why, not only
 * "unreachable". The instance is done, so growing its memory by a page to find out harms nothing.
 */
function atCap(port: GuestPort): string {
  try {
    port.memory.grow(1);
    return '';
  } catch {
    return ` (its memory is at its limit of ${memorySize(port)} bytes: it could not grow further)`;
  }
}

function failure(code: CallError['code'], message: string): GuestOutcome {
  return { error: { code, message } };
}

export class Chain implements CallChain {
  readonly limits: TaskLimits;
  private sent = 0;
  private overspent = false;
  /** The call's latest accepted progress and how many it sent (`berm.progress`). */
  private progressed: { last: number; count: number } = { last: Number.NEGATIVE_INFINITY, count: 0 };
  private readonly callId: number;
  private readonly programs: Map<string, LoadedProgram>;
  private readonly barred: Barred | undefined;
  private readonly send: (message: WorkerMessage, transfer?: TransferListItem[]) => void;
  /** The call is traced: its instances' and nested calls' times are told (only then: an untraced call tells nothing more). */
  private readonly traced: boolean;
  /** A traced call's marks made since its last message, which the next message (or the result) carries. */
  private marks: TraceMark[] | undefined;

  constructor(
    callId: number,
    programs: ProgramPayload[],
    limits: TaskLimits,
    send: (message: WorkerMessage, transfer?: TransferListItem[]) => void,
    barred?: Barred,
    traced = false,
  ) {
    this.callId = callId;
    this.traced = traced;
    this.limits = limits;
    this.send = send;
    this.barred = barred;
    this.programs = new Map(programs.map((p) => [p.name, new LoadedProgram(p)]));
  }

  program(name: string): LoadedProgram | undefined {
    return this.programs.get(name);
  }

  barredBy(program: string): string | undefined {
    return this.barred?.programs.includes(program) ? this.barred.caller : undefined;
  }

  post(body: WorkerMessageBody, transfer?: TransferListItem[]): void {
    const marks = this.marks;
    if (marks === undefined) {
      this.send({ ...body, callId: this.callId } as WorkerMessage, transfer);
      return;
    }
    this.marks = undefined;
    this.send({ ...body, callId: this.callId, marks } as WorkerMessage, transfer);
  }

  /** The marks no message has carried yet, for the task's result; none are held after. */
  takeMarks(): TraceMark[] | undefined {
    const marks = this.marks;
    this.marks = undefined;
    return marks;
  }

  /**
   * Keeps `mark` for the next message rather than posting it: a message of its own would be one more for
   * the main thread to take in with every traced call. A call stopped by its time limit loses the marks
   * made since its last message, as its spans then end at the stop.
   */
  private mark(mark: TraceMark): void {
    if (this.marks === undefined) this.marks = [mark];
    else this.marks.push(mark);
  }

  /**
   * Counts `bytes` of logs and events against the call's budget; false (and nothing counted) when they do
   * not fit. The first refusal is told to the runner, so a call that goes on flooding until its time limit
   * is answered with why.
   */
  spend(bytes: number): boolean {
    if (this.sent + bytes > this.limits.maxResultBytes) {
      if (!this.overspent) {
        this.overspent = true;
        this.post({ kind: 'spent', budget: this.limits.maxResultBytes });
      }
      return false;
    }
    this.sent += bytes;
    return true;
  }

  /**
   * Takes `progress` as the call's latest: a refusal message when it is below the latest, or when the
   * call has sent its `max` progress reports; undefined (and it is counted) when it is accepted.
   */
  advance(progress: number, max: number): string | undefined {
    const { last, count } = this.progressed;
    if (progress < last) return `progress ${progress} is below the call's latest, ${last}: progress never decreases`;
    if (count >= max) return `this call has sent its ${max} progress reports; no more are sent`;
    this.progressed = { last: progress, count: count + 1 };
    return undefined;
  }

  /** A refusal message when `args` do not fit the tool's schema; undefined when they do. */
  checkArguments(program: LoadedProgram, tool: string, args: unknown): string | undefined {
    return violation(program.check('t', program.payload.tools.indexOf(tool)), 'argument', args)?.message;
  }

  checkFields(program: LoadedProgram, event: string, fields: unknown): string | undefined {
    return violation(program.check('e', program.payload.events.indexOf(event)), 'field', fields)?.message;
  }

  /** Runs `tool` of `program` in a fresh instance. Never throws: every failure is an outcome. */
  invoke(program: LoadedProgram, tool: string, args: string, depth: number, key?: string, exportName?: string): GuestOutcome {
    if (!this.traced) {
      if (depth > 0) this.post({ kind: 'reach', harness: program.name, tool, depth });
      return this.run(program, tool, args, depth, key, exportName);
    }
    // The worker's clock as epoch milliseconds, which the main thread's spans read alike.
    if (depth > 0) this.post({ kind: 'reach', harness: program.name, tool, depth, at: performance.timeOrigin + performance.now() });
    const outcome = this.run(program, tool, args, depth, key, exportName);
    if (depth > 0) {
      const at = performance.timeOrigin + performance.now();
      this.mark('error' in outcome ? { kind: 'left', depth, at, error: outcome.error.code } : { kind: 'left', depth, at });
    }
    return outcome;
  }

  private run(
    program: LoadedProgram,
    tool: string,
    args: string,
    depth: number,
    key: string | undefined,
    exportName = `berm_tool_${tool}`,
  ): GuestOutcome {
    const label = `${program.name}.${tool}`;
    let port: GuestPort | undefined;
    const imports: Record<string, Record<string, unknown>> = {};
    // One context for the instance: its nested calls count their ordinals on it, whichever import makes them.
    const ctx: HostCallContext = { chain: this, program, tool, depth, key, calls: 0 };
    for (const imp of program.facts.imports) {
      const dotted = `${imp.module}.${imp.name}`;
      const serve = imp.kind === 'function' ? HOST_CALLS.get(dotted) : undefined;
      if (serve === undefined)
        return failure('bad-module', `${program.name} imports ${imp.kind} ${dotted}, which this runtime does not serve`);
      (imports[imp.module] ??= {})[imp.name] = (ptr: number, len: number): bigint => {
        if (port === undefined) throw new AbiViolation(`${dotted} was called before the instance was ready (from a start function)`);
        return this.hostCall(dotted, serve, ctx, port, ptr >>> 0, len >>> 0);
      };
    }
    let instance: WebAssembly.Instance;
    const from = this.traced ? performance.timeOrigin + performance.now() : 0;
    try {
      instance = new WebAssembly.Instance(program.payload.module, imports);
    } catch (e) {
      return this.fault(e, `${label} could not be instantiated`, port);
    }
    if (this.traced)
      this.mark({ kind: 'instantiated', harness: program.name, tool, depth, from, to: performance.timeOrigin + performance.now() });
    const { memory, berm_alloc: alloc } = instance.exports;
    const entry = instance.exports[exportName];
    if (!(memory instanceof WebAssembly.Memory)) return failure('bad-module', `${program.name} does not export its memory as "memory"`);
    if (typeof alloc !== 'function') return failure('bad-module', `${program.name} does not export berm_alloc`);
    if (typeof entry !== 'function') return failure('bad-module', `${program.name} does not export ${exportName}`);
    port = { memory, alloc: alloc as GuestPort['alloc'] };
    let packed: unknown;
    try {
      const bytes = encodeText(args);
      const ptr = writeGuest(port, bytes);
      packed = (entry as (ptr: number, len: number) => unknown)(ptr, bytes.length);
    } catch (e) {
      return this.fault(e, label, port);
    }
    return this.envelope(port, packed, label, program.payload.maxResultBytes, program.payload.content?.[tool]);
  }

  private envelope(port: GuestPort, packed: unknown, label: string, max: number, kinds: string[] | undefined): GuestOutcome {
    if (typeof packed !== 'bigint') return failure('bad-result', `${label} did not return an i64 packing (ptr << 32) | len`);
    const { ptr, len } = unpack(packed);
    if (len > max) return failure('result-too-large', `${label} returned ${len} bytes, above the limit of ${max}`);
    const bytes = readGuest(port, ptr, len);
    if (bytes === undefined)
      return failure('bad-result', `${label} returned bytes ${ptr}..${ptr + len}, outside its ${memorySize(port)}-byte memory`);
    let value: unknown;
    try {
      value = parseJson(bytes);
    } catch (e) {
      return failure('bad-result', `${label} returned a result that ${(e as Error).message}`);
    }
    if (isPlainObject(value)) {
      const keys = Object.keys(value);
      if (keys.length === 1 && keys[0] === 'ok') return { ok: value.ok };
      if (keys.length === 2 && 'ok' in value && 'content' in value) {
        const problem = contentProblem(value.content, kinds);
        if (problem !== undefined) return failure('bad-content', `${label} returned a result whose ${problem}`);
        return { ok: value.ok, content: value.content as unknown[] };
      }
      if (keys.length === 1 && keys[0] === 'error' && typeof value.error === 'string') return failure('guest-error', value.error);
    }
    return failure('bad-result', `${label} returned a result that is not an envelope {"ok": value} or {"error": "message"}`);
  }

  /** A thrown guest failure as an outcome: traps by their V8 message, anything else by what it was. */
  private fault(e: unknown, label: string, port?: GuestPort): GuestOutcome {
    if (e instanceof WebAssembly.RuntimeError)
      return failure('trap', `${label} trapped: ${e.message}${port === undefined ? '' : atCap(port)}`);
    if (e instanceof WebAssembly.LinkError || e instanceof WebAssembly.CompileError) return failure('bad-module', `${label}: ${e.message}`);
    if (e instanceof AbiViolation) return failure('bad-result', `${label}: ${e.message}`);
    if (e instanceof RangeError) {
      if (/call stack/i.test(e.message)) return failure('trap', `${label} trapped: stack overflow (${e.message})`);
      if (/memory/i.test(e.message)) return failure('memory-limit', `${label}: ${e.message}`);
    }
    return failure('internal', `${label}: ${e instanceof Error ? e.message : String(e)}`);
  }

  private hostCall(name: string, serve: HostCall, ctx: HostCallContext, port: GuestPort, ptr: number, len: number): bigint {
    let answer: HostEnvelope;
    const max = ctx.program.payload.maxResultBytes;
    const bytes = len > max ? undefined : readGuest(port, ptr, len);
    if (len > max) answer = { refused: `the ${name} request is ${len} bytes, above the limit of ${max}` };
    else if (bytes === undefined) answer = { refused: `the ${name} request at ${ptr}..${ptr + len} lies outside the guest's memory` };
    else {
      try {
        const request = parseJson(bytes);
        try {
          answer = serve(ctx, request, len);
        } catch (e) {
          answer = { failed: `${name} failed in the host: ${e instanceof Error ? e.message : String(e)}` };
        }
      } catch (e) {
        answer = { refused: `the ${name} request ${(e as Error).message}` };
      }
    }
    const out = encodeText(JSON.stringify(answer));
    // A trap in berm_alloc propagates: it is the calling guest's own failure.
    return pack(writeGuest(port, out), out.length);
  }
}
