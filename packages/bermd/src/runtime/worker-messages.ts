/**
 * What crosses between the runner (main thread) and its workers. Everything here is structured-cloneable;
 * a `WebAssembly.Module` clones by sharing V8's compiled code, not by copying or recompiling it.
 */
import type { MessagePort } from 'node:worker_threads';
import type { CallError } from './errors.js';

/** One deployed program as a worker needs it to instantiate it and to serve its host calls. */
export interface ProgramPayload {
  /** The name it is deployed under: what `berm.call` requests address. */
  name: string;
  /** Unique per `setHarness`, so a worker's cached validators can never belong to an older deploy. */
  key: number;
  module: WebAssembly.Module;
  /** In manifest order, so `t<i>` in `validators` is `tools[i]`. */
  tools: string[];
  /** In manifest order, so `e<i>` in `validators` is `events[i]`. */
  events: string[];
  /** `deps.programs`: the names this program may call besides itself. */
  programs: string[];
  /** Standalone validator source (see validators.ts); empty when the worker will not need it for this call. */
  validators: string;
  /** The longest result (and host-call request) read from this program's instances: its harness's limit. */
  maxResultBytes: number;
  /** The content kinds each tool declares (`ToolSpec.content`), by tool; absent when none declares any. */
  content?: Record<string, string[]>;
  /** The paths of its declared resources and templates, which `berm.resource_updated` may name. */
  resources?: string[];
}

export interface TaskLimits {
  maxCallDepth: number;
  maxResultBytes: number;
}

/**
 * What a task's caller may not reach: the programs it carries that the caller may not call, which its
 * `berm.call`s refuse, and the caller's name for the refusal. Absent when the caller may call them all.
 */
export interface Barred {
  caller: string;
  programs: string[];
}

export interface Task {
  callId: number;
  tool: string;
  /** The export to run in place of the tool's `berm_tool_{tool}`: a prompt's, a resource read, a completion. */
  export?: string;
  /** The arguments as JSON text, already validated. */
  args: string;
  /** `programs[0]` is the called harness; the rest are the deployed programs its calls can reach. */
  programs: ProgramPayload[];
  limits: TaskLimits;
  barred: Barred | undefined;
  /** The call is traced: the worker tells when each instance was made and each nested call ended (`TraceMark`). */
  traced?: true;
  /** The call's idempotency key (a call of an `external_write` tool); its nested calls derive theirs from it (chain.ts). */
  key?: string;
}

/** What a tool answered: its value, and the content blocks beside it when its envelope carried them (checked: content.ts). */
export type GuestOutcome = { ok: unknown; content?: unknown[] } | { error: CallError };

export interface TaskResult {
  outcome: GuestOutcome;
  /** A traced call's marks not yet told with a message of the worker's. */
  marks?: TraceMark[];
}

/**
 * What a traced call's worker measured of it (epoch ms, the worker's clock): an instance of `harness` made
 * between `from` and `to`, or the nested call at `depth` ended at `at`, with the code of its error if it
 * failed. Marks are not posted on their own: they go with the worker's next message, or with the result,
 * so a traced call costs the main thread no message more than an untraced one (chain.ts).
 */
export type TraceMark =
  | { kind: 'instantiated'; harness: string; tool: string; depth: number; from: number; to: number }
  | { kind: 'left'; depth: number; at: number; error?: string };

/**
 * What a worker reports of a call as it runs, besides its result: an accepted `berm.log` line or
 * `berm.emit` event, with the harness and tool whose instance sent it. The runner hands it to whoever
 * listens (`onReport`), without the call's id.
 */
export type GuestReport =
  | { kind: 'log'; harness: string; tool: string; level: string; message: string }
  | { kind: 'event'; harness: string; tool: string; event: string; fields: unknown }
  /** An accepted `berm.progress`: never less than the call's previous one. */
  | { kind: 'progress'; harness: string; tool: string; progress: number; total?: number; message?: string };

/** A report as it travels, tagged with its call. */
export type ReportMessage = GuestReport & { callId: number };

/**
 * Posted by a worker to the main thread while a task runs, before its result (the pool's `onMessage`), with
 * the traced call's marks made since its previous message, which come first.
 */
export type WorkerMessage = WorkerMessageOf & { marks?: TraceMark[] };

type WorkerMessageOf =
  | { callId: number; kind: 'reach'; harness: string; tool: string; depth: number; at?: number }
  /** The call's budget of log and event bytes is spent: what it sends from now on is refused. */
  | { callId: number; kind: 'spent'; budget: number }
  | ReportMessage
  /** `harness`'s resource at `path` changed (`berm.resource_updated`): its subscribed sessions are told. */
  | { callId: number; kind: 'resource-updated'; harness: string; path: string }
  /** A host call the main thread serves (http-fetch.ts): the worker waits on `flag` for the envelope on `reply`. */
  | {
      callId: number;
      kind: 'host';
      name: string;
      harness: string;
      tool: string;
      request: unknown;
      reply: MessagePort;
      flag: Int32Array;
      /** The idempotency key of the instance making it, for `{idempotency-key}` in what it sends. */
      key?: string;
    };
