/**
 * What a host call is, and what it sees of the call it runs in: the chain of instances on this worker
 * (chain.ts implements it) and the program whose instance imported it. Types only, so the table of host
 * calls (host-calls.ts) and the chain that runs them do not import each other.
 */
import type { TransferListItem } from 'node:worker_threads';
import type { GuestOutcome, ProgramPayload, TaskLimits, WorkerMessage } from './worker-messages.js';

export type HostEnvelope = { ok: unknown } | { refused: string } | { failed: string };

/** A worker message without the call id and the trace marks, which the chain adds. */
export type WorkerMessageBody = WorkerMessage extends infer M ? (M extends WorkerMessage ? Omit<M, 'callId' | 'marks'> : never) : never;

/** A deployed program as the chain holds it. */
export interface ChainProgram {
  readonly name: string;
  readonly payload: ProgramPayload;
}

/** One call's chain of instances, as host calls use it. */
export interface CallChain {
  readonly limits: TaskLimits;
  program(name: string): ChainProgram | undefined;
  /** The name of the chain's caller when it may not call `program` (a `berm.call` to it is refused); undefined when it may. */
  barredBy(program: string): string | undefined;
  /** Posts a message to the main thread, tagged with the call. */
  post(body: WorkerMessageBody, transfer?: TransferListItem[]): void;
  /** Counts `bytes` of logs and events against the call's budget; false (and nothing counted) when they do not fit. */
  spend(bytes: number): boolean;
  /** Takes `progress` as the call's latest; a refusal message when it decreases or the call has sent `max` already. */
  advance(progress: number, max: number): string | undefined;
  /** A refusal message when `args` do not fit the tool's schema; undefined when they do. */
  checkArguments(program: ChainProgram, tool: string, args: unknown): string | undefined;
  checkFields(program: ChainProgram, event: string, fields: unknown): string | undefined;
  /** Runs `tool` of `program` in a fresh instance. Never throws: every failure is an outcome. */
  invoke(program: ChainProgram, tool: string, args: string, depth: number, key?: string): GuestOutcome;
}

/** Who is making a host call: the program and tool whose instance imported it, and how deep in the chain. */
export interface HostCallContext {
  chain: CallChain;
  program: ChainProgram;
  tool: string;
  /** 0 for the tool the runner called, n for the n-th nested `berm.call`. */
  depth: number;
  /** This instance's idempotency key: the call's, or the one derived for a nested call; undefined without one. */
  key?: string;
  /** How many `berm.call`s this instance has made: the ordinal each nested key is derived with. */
  calls: number;
}

/** `size` is the request's length in bytes, for host calls that budget what a guest sends. */
export type HostCall = (ctx: HostCallContext, request: unknown, size: number) => HostEnvelope;
