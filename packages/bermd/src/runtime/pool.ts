/**
 * `WorkerPool`: the worker threads a runner's calls run on. A task goes to an idle worker (the fair queue
 * in front, fair-queue.ts, hands the pool no more tasks than it has workers); a task whose stop fires
 * while it runs ends at once, and its worker is terminated (the only way to stop a guest spinning in a
 * loop) and replaced; a worker that dies (its heap exhausted, an uncaught error) fails the task it was
 * running and is replaced. At least `min` workers are kept; above that, a worker idle for
 * `idleTimeoutMs` ends.
 *
 * Hand-written in place of piscina, which bermd ran on first. Measured on this project's 2-core machine
 * (Node 20, the runner alone with 8 calls in flight on a trivial tool, one build against the other):
 * piscina's per-task bookkeeping (a TaskInfo async resource, an interface object with six accessors for
 * every worker on every dispatch, a balancer, several queued microtasks, polling every worker for pending
 * answers) took 38-49 µs of the main thread per call where this pool takes 25-33, and 20-25 µs of the
 * process's CPU per call in all; on /mcp the main thread is what bounds throughput. What piscina did
 * beyond that (its own queue, load balancing, several tasks per worker, histograms, Atomics-based wake
 * ups) the runner does not use: one task per worker, and a fair queue of its own.
 *
 * One port carries everything a worker sends (worker.ts): the messages a call posts while it runs (logs,
 * events, host calls) and then its result, in that order, so a call's messages are all delivered before
 * its result settles it.
 */
import { Worker } from 'node:worker_threads';
import type { Stop } from './stop.js';

/**
 * What a worker posts to the pool itself: once it listens for tasks (`ready`), and when a task ends;
 * anything else it posts is a message of the task under way.
 */
export type WorkerReply<R> = { kind: 'ready' } | { kind: 'result'; result: R } | { kind: 'failure'; message: string };

/** A worker's task stopped before it ended (its time limit, its caller, the runner closing). */
export class TaskStopped extends Error {
  override name = 'TaskStopped';
}

export interface PoolOptions {
  /** The worker script's path: it answers each task posted to it with one `WorkerReply`. */
  filename: string;
  /** Workers kept even when idle. */
  min: number;
  /** The most workers at once: the most tasks running at once. */
  max: number;
  /** How long a worker above `min` may idle before it ends. */
  idleTimeoutMs: number;
  /** Every message a worker posts that is not a task's reply. */
  onMessage(message: unknown): void;
}

interface Running<R> {
  resolve(result: R): void;
  reject(e: unknown): void;
  stop: Stop;
  onStop(): void;
}

class PoolWorker<R> {
  readonly thread: Worker;
  running?: Running<R>;
  /** Terminated (or exited): it takes no task and no longer counts. */
  gone = false;
  /** It has started listening for tasks. */
  ready = false;
  idleTimer?: NodeJS.Timeout;
  /** Why it failed, when it reported an error before exiting. */
  error?: unknown;

  constructor(filename: string) {
    this.thread = new Worker(filename);
  }
}

function isReply(message: unknown): message is WorkerReply<unknown> {
  const kind = (message as { kind?: unknown } | null)?.kind;
  return kind === 'result' || kind === 'failure' || kind === 'ready';
}

export class WorkerPool<T, R> {
  private readonly workers = new Set<PoolWorker<R>>();
  private readonly idle: PoolWorker<R>[] = [];
  private destroyed = false;

  constructor(private readonly options: PoolOptions) {
    for (let i = 0; i < options.min; i++) this.idle.push(this.spawn());
  }

  /** Workers alive (terminating ones not counted). */
  get size(): number {
    return this.workers.size;
  }

  /**
   * Runs `task` on an idle worker (started when none is idle and there is room); resolves with its
   * result, rejects with its failure, or with `TaskStopped` as soon as `stop` fires while it runs.
   */
  run(task: T, stop: Stop): Promise<R> {
    if (this.destroyed) return Promise.reject(new TaskStopped('the worker pool is closed'));
    if (stop.aborted) return Promise.reject(new TaskStopped('the task was stopped before it started'));
    let worker = this.idle.pop();
    if (worker === undefined) {
      if (this.workers.size >= this.options.max)
        return Promise.reject(new Error(`all ${this.options.max} workers are busy: the runner handed the pool one task too many`));
      worker = this.spawn();
    }
    const chosen = worker;
    if (chosen.idleTimer !== undefined) {
      clearTimeout(chosen.idleTimer);
      chosen.idleTimer = undefined;
    }
    return new Promise<R>((resolve, reject) => {
      const onStop = (): void => {
        if (chosen.running !== running) return;
        chosen.running = undefined;
        reject(new TaskStopped('the task was stopped'));
        this.retire(chosen);
      };
      const running: Running<R> = { resolve, reject, stop, onStop };
      chosen.running = running;
      stop.addEventListener('abort', onStop);
      // A running task keeps the process alive; an idle worker does not.
      chosen.thread.ref();
      chosen.thread.postMessage(task);
    });
  }

  /** Terminates every worker; tasks running are failed with `TaskStopped`. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    const exits: Promise<number>[] = [];
    for (const worker of [...this.workers]) {
      const running = worker.running;
      worker.running = undefined;
      if (running !== undefined) {
        running.stop.removeEventListener('abort', running.onStop);
        running.reject(new TaskStopped('the worker pool closed'));
      }
      exits.push(this.terminate(worker));
    }
    this.idle.length = 0;
    await Promise.allSettled(exits);
  }

  private spawn(): PoolWorker<R> {
    const worker = new PoolWorker<R>(this.options.filename);
    this.workers.add(worker);
    const { thread } = worker;
    thread.unref();
    thread.on('message', (message: unknown) => {
      if (!isReply(message)) {
        this.options.onMessage(message);
        return;
      }
      if (message.kind === 'ready') {
        worker.ready = true;
        return;
      }
      const running = worker.running;
      if (running === undefined) return;
      worker.running = undefined;
      running.stop.removeEventListener('abort', running.onStop);
      this.release(worker);
      if (message.kind === 'result') running.resolve(message.result as R);
      else running.reject(new Error(message.message));
    });
    // An uncaught error (or an exhausted heap, ERR_WORKER_OUT_OF_MEMORY) comes before the exit.
    thread.on('error', (e: unknown) => {
      worker.error ??= e;
    });
    thread.on('exit', (code) => {
      const running = worker.running;
      worker.running = undefined;
      if (!worker.gone) this.forget(worker);
      if (running !== undefined) {
        running.stop.removeEventListener('abort', running.onStop);
        running.reject(worker.error ?? new Error(`the worker exited with code ${code} while it ran the task`));
      }
      // A worker that failed before it listened would fail again: the next task starts one, and fails alike.
      if (worker.ready) this.replenish();
    });
    return worker;
  }

  /** Back to the idle workers, or (above `min`, after the idle timeout) ended. */
  private release(worker: PoolWorker<R>): void {
    if (worker.gone) return;
    worker.thread.unref();
    this.idle.push(worker);
    if (this.workers.size > this.options.min) {
      worker.idleTimer = setTimeout(() => {
        worker.idleTimer = undefined;
        if (worker.running !== undefined || worker.gone || this.workers.size <= this.options.min) return;
        this.retire(worker);
      }, this.options.idleTimeoutMs).unref();
    }
  }

  /** Ends `worker` (its task, if any, already settled) and keeps `min` workers. */
  private retire(worker: PoolWorker<R>): void {
    void this.terminate(worker);
    this.replenish();
  }

  private terminate(worker: PoolWorker<R>): Promise<number> {
    if (!worker.gone) this.forget(worker);
    return worker.thread.terminate();
  }

  private forget(worker: PoolWorker<R>): void {
    worker.gone = true;
    if (worker.idleTimer !== undefined) clearTimeout(worker.idleTimer);
    this.workers.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
  }

  private replenish(): void {
    while (!this.destroyed && this.workers.size < this.options.min) this.idle.push(this.spawn());
  }
}
