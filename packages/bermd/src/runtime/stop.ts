/**
 * `Stop`: what a call needs of an `AbortController` (stopped once, with a reason, telling whoever
 * listens), hand-written because a call is made thousands of times a second: an `AbortController`, its
 * signal and each `abort` listener (EventTarget) cost microseconds apiece to create, add and remove, and a
 * `tools/call` through the fast path needed two controllers and up to four listeners, where a `Stop` and
 * its listeners cost a small fraction of that.
 *
 * The worker pool listens on it for a task's end (pool.ts), and it has the shape the runner reads from a
 * caller's signal (`SignalLike`), which a real `AbortSignal` also has. A real signal is made from it only when something needs one (`signal`): a host
 * service handing it to an HTTP client.
 */

/** What the runner reads from a caller's signal: an `AbortSignal`, or a `Stop`. */
export interface SignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class Stop implements SignalLike {
  aborted = false;
  reason: unknown;
  private listeners: Array<() => void> = [];
  private controller?: AbortController;

  /** Stops it (once): every listener is called, in the order added, and removed. */
  abort(reason: unknown = new Error('stopped')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }

  /** Calls `listener` once, when it stops; never after it has stopped (as an aborted signal's listeners). */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at >= 0) this.listeners.splice(at, 1);
  }

  /** A real `AbortSignal` that aborts when this stops, made on first use. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.aborted) controller.abort(this.reason);
      else this.addEventListener('abort', () => controller.abort(this.reason));
    }
    return this.controller.signal;
  }
}
