/**
 * Host calls served away from the guest's thread: `berm.http.fetch` and `berm.http.proxy`.
 *
 * A host call is synchronous for the guest (spec §4), but an HTTP request must not block the daemon.
 * So the worker posts the request to the main thread with a private reply port and a shared flag, and
 * waits on the flag (`Atomics.wait`); the main thread runs the request (the runner's `hostServices`),
 * posts the envelope on the port, then raises the flag. The worker wakes and takes the envelope from
 * the port synchronously (`receiveMessageOnPort`). Only this worker's guest waits; the daemon and the
 * other workers go on. The call's time limit still holds: at the deadline the runner terminates the
 * worker (which ends an `Atomics.wait` too) and aborts the request under way.
 */
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { ASK_SYSCALLS, HTTP_SYSCALLS } from '@berm/protocol';
import type { HostCall, HostEnvelope } from './host-call.js';

/** Host calls whose work the main thread does; each must be given a service (`RunnerOptions.hostServices`) to do anything. */
export const ASYNC_HOST_CALLS: readonly string[] = HTTP_SYSCALLS;

/**
 * Host calls the main thread answers by asking the call's own client (`berm.elicit`, `berm.sample`):
 * forwarded the same way, served by the call's `CallOptions.ask` rather than a runner-wide service.
 */
export const ASK_HOST_CALLS: readonly string[] = ASK_SYSCALLS;

const WAITING = 0;
export const ANSWERED = 1;

/** A host call that forwards its request to the main thread and blocks this worker until it answers. */
export function forwardedHostCall(name: string): HostCall {
  return (ctx, request) => {
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    try {
      ctx.chain.post({ kind: 'host', name, harness: ctx.program.name, tool: ctx.tool, request, reply: port2, flag, key: ctx.key }, [port2]);
      Atomics.wait(flag, 0, WAITING);
      const received = receiveMessageOnPort(port1);
      if (received === undefined) return { failed: `${name}: the host answered nothing` };
      return received.message as HostEnvelope;
    } finally {
      port1.close();
    }
  };
}

/** The main thread's side: posts `envelope` to the waiting worker and wakes it. */
export function answerWorker(reply: MessagePort, flag: Int32Array, envelope: HostEnvelope): void {
  try {
    reply.postMessage(envelope);
  } finally {
    reply.close();
    Atomics.store(flag, 0, ANSWERED);
    Atomics.notify(flag, 0);
  }
}

/** How a host service traces the request it sends for a traced call (telemetry/ implements it). */
export interface HostTrace {
  /** The request goes to `url` with `method` now: the headers that carry the trace to it (none when it is not sampled). */
  sending(method: string, url: URL): Record<string, string>;
  /** It was answered with `status`. */
  answered(status: number): void;
  /** It failed: `message` says why, without secrets. */
  failed(message: string): void;
}

/** One forwarded host call, as the main thread's service for it sees it. */
export interface HostServiceCall {
  /** The host call's dotted name. */
  name: string;
  /** The harness whose instance made the call, and its tool. */
  harness: string;
  tool: string;
  /** The harness the call entered through: the top of a `berm.call` chain (the same as `harness` when there is no chain). */
  entry: string;
  /**
   * The name of the principal the chain runs for (`CallOptions.caller`): whose value a secret given per
   * principal takes. Undefined for a call of bermd's own, made for no principal.
   */
  caller: string | undefined;
  /** What the deployer attached to `harness` (`HarnessInput.context`), as deployed when the call started. */
  context: unknown;
  /** The guest's request, parsed JSON. */
  request: unknown;
  /** Aborted when the call ends before the service answers: its time limit, its caller cancelling, the runner closing. */
  signal: AbortSignal;
  /** Set when the call is traced: what the service sends is a span of it. */
  trace?: HostTrace;
  /** The idempotency key of the instance making the request (`{idempotency-key}` in a header value); undefined without one. */
  idempotencyKey?: string;
}

/** Serves one forwarded host call; a rejection is answered as `{"failed": message}`. */
export type HostService = (call: HostServiceCall) => Promise<HostEnvelope>;
