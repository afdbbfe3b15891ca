/**
 * `WorkerPool`: the worker threads a runner's calls run on. A task goes to an idle worker (the fair queue
 * in front, fair-queue.ts, hands the pool no more tasks than it has workers); a task whose stop fires
 * while it runs ends at once, and its worker is terminated (the only way to stop a guest spinning in a
 * loop) and replaced; a worker that dies (its heap exhausted, an uncaught error) fails the task it was
 * running and is replaced. At least `min` workers are kept; above that, a worker idle for
 * `idleTimeoutMs` ends.
 *
 * Hand-written in place of piscina, which bermd ran on first: piscina's per-task bookkeeping (a TaskInfo
 * async resource, an interface object with six accessors for every worker on every dispatch, a balancer,
 * several queued microtasks, polling every worker for pending answers) measured well above this pool's
 * on the main thread, which is what bounds /mcp's throughput (the figures are in docs/decisions.md). What
 * piscina did beyond that (its own queue, load balancing, several tasks per worker, histograms) the runner
 * does not use: one task per worker, and a fair queue of its own.
 *
 * Each worker has a port of its own (`serveTasks` is its side): tasks go out on it, and the messages a
 * task posts while it runs (logs, events, host calls) come back on it, then its reply, in that order, so
 * a task's messages are all delivered before its reply settles it.
 *
 * The pool polls its ports: it takes in the replies already posted without waiting for the event loop
 * to deliver them, because under load a task's reply otherwise waits behind the main thread's HTTP work,
 * holding its worker for several times the task's own work, and a worker is what a waiting call needs.
 * It polls when a task is posted (before choosing its worker, so a worker whose reply is in serves it
 * rather than a new thread) and when the event loop delivers a reply (the others posted meanwhile come
 * in with it). A shared counter, raised by a worker after each reply, makes a poll with nothing to take
 * one atomic read.
 */
import {
  MessageChannel,
  type MessagePort,
  parentPort,
  receiveMessageOnPort,
  type TransferListItem,
  Worker,
  workerData,
} from 'node:worker_threads';
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

/**
 * What a call's task is run by: a pool of worker threads (`WorkerPool`), or the runner's own thread
 * (`InlinePool`, inline.ts). `run` settles with the task's result, or rejects with `TaskStopped` once
 * `stop` fires while it runs; `timeoutMs` is how long it may run, which a pool that cannot end the task's
 * thread keeps itself (the caller fires `stop` by then).
 */
export interface TaskPool<T, R> {
  run(task: T, stop: Stop, timeoutMs: number): Promise<R>;
  destroy(): Promise<void>;
}

/** What the pool gives each worker thread (its `workerData`). */
interface WorkerSide {
  port: MessagePort;
  /** Raised by one after each reply a worker posts. */
  replies: Int32Array;
  /** Raised by one, and notified, after each task the pool posts to this worker. */
  tasks: Int32Array;
}

export interface PoolOptions {
  /** The worker script's path: it serves its tasks with `serveTasks`. */
  filename: string;
  /** Workers kept even when idle. */
  min: number;
  /** The most workers at once: the most tasks running at once. */
  max: number;
  /** How long a worker above `min` may idle before it ends. */
  idleTimeoutMs: number;
  /** Every message a worker posts that is not a task's reply. */
  onMessage(message: unknown): void;
  /** Workers started ahead for this pool's script, taken as its own (at most `max` of them; the rest are ended). */
  started?: StartedWorkers;
}

interface Running<R> {
  resolve(result: R): void;
  reject(e: unknown): void;
  stop: Stop;
  onStop(): void;
}

class PoolWorker<R> {
  readonly thread: Worker;
  /** The pool's end of the worker's port. */
  readonly port: MessagePort;
  /** The worker's `tasks` counter (see `serveTasks`). */
  readonly tasks = new Int32Array(new SharedArrayBuffer(4));
  running?: Running<R>;
  /** Terminated (or exited): it takes no task and no longer counts. */
  gone = false;
  /** It has started listening for tasks. */
  ready = false;
  idleTimer?: NodeJS.Timeout;
  /** Why it failed, when it reported an error before exiting. */
  error?: unknown;
  /** Its exit code, once it has exited. */
  exitCode?: number;
  /** Told of its exit: the pool's handler, once a pool has it. */
  onExit?: (code: number) => void;

  constructor(filename: string, replies: Int32Array) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.thread = new Worker(filename, {
      workerData: { port: port2, replies, tasks: this.tasks } satisfies WorkerSide,
      transferList: [port2],
    });
    // From its start, not from when a pool takes it: a worker started ahead (StartedWorkers) may fail or
    // exit before then, and an 'error' no one listens for would be thrown in the main thread.
    this.thread.unref();
    // An uncaught error (or an exhausted heap, ERR_WORKER_OUT_OF_MEMORY) comes before the exit.
    this.thread.on('error', (e: unknown) => {
      this.error ??= e;
    });
    this.thread.on('exit', (code) => {
      this.exitCode = code;
      this.onExit?.(code);
    });
  }
}

/**
 * Worker threads started before the pool that will run them: for a caller that knows early it will need
 * them, so that their start runs on another core while it goes on importing and preparing (`crab run`
 * starts its worker before it imports the runtime). A pool given them (`PoolOptions.started`) takes them
 * as its own, once; until then, and when none takes them, `terminate` ends them. Threads started ahead
 * hold nothing open: a process that never hands them to a pool still exits.
 */
export class StartedWorkers {
  /** The script they run; a pool takes them only for the same script. */
  readonly filename: string;
  /** The reply counter the workers raise (see the header), which the pool taking them polls. */
  readonly replies = new Int32Array(new SharedArrayBuffer(4));
  private held: PoolWorker<unknown>[];

  constructor(filename: string, count: number) {
    this.filename = filename;
    this.held = Array.from({ length: count }, () => new PoolWorker<unknown>(filename, this.replies));
  }

  /** Workers started and not yet taken by a pool. */
  get size(): number {
    return this.held.length;
  }

  /** For the pool that takes them: the workers, handed over once (a second take gets none). */
  take<R>(): PoolWorker<R>[] {
    const taken = this.held as PoolWorker<R>[];
    this.held = [];
    return taken;
  }

  /** Ends the workers no pool has taken; those a pool took are the pool's to end. */
  async terminate(): Promise<void> {
    const left = this.take();
    for (const worker of left) worker.gone = true;
    await Promise.allSettled(left.map((worker) => worker.thread.terminate()));
  }
}

function isReply(message: unknown): message is WorkerReply<unknown> {
  const kind = (message as { kind?: unknown } | null)?.kind;
  return kind === 'result' || kind === 'failure' || kind === 'ready';
}

export class WorkerPool<T, R> implements TaskPool<T, R> {
  private readonly workers = new Set<PoolWorker<R>>();
  private readonly idle: PoolWorker<R>[] = [];
  private readonly replies: Int32Array;
  /** The reply counter when it was last polled. */
  private polled = 0;
  private destroyed = false;

  constructor(private readonly options: PoolOptions) {
    const { started } = options;
    if (started !== undefined && started.filename !== options.filename)
      throw new Error(`workers started for ${started.filename} cannot serve a pool of ${options.filename}`);
    // The workers started ahead raise the counter they were given: the pool's is theirs.
    this.replies = started?.replies ?? new Int32Array(new SharedArrayBuffer(4));
    const taken = started?.take<R>() ?? [];
    for (const worker of taken.splice(options.max)) {
      worker.gone = true;
      void worker.thread.terminate();
    }
    for (const worker of taken) if (this.adopt(worker)) this.idle.push(worker);
    this.replenish();
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
    // First: what it takes in may free a worker for this task, and runs the messages' handler, which may
    // stop this task or close the pool (both checked below).
    this.poll();
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
      chosen.port.ref();
      chosen.port.postMessage(task);
      Atomics.add(chosen.tasks, 0, 1);
      Atomics.notify(chosen.tasks, 0, 1);
    });
  }

  /** Takes in, at once, what the workers have posted up to their latest reply (see the header). */
  private poll(): void {
    const posted = Atomics.load(this.replies, 0);
    if (posted === this.polled) return;
    this.polled = posted;
    for (const worker of this.workers) {
      if (worker.running === undefined) continue;
      for (let m = receiveMessageOnPort(worker.port); m !== undefined; m = receiveMessageOnPort(worker.port)) {
        this.receive(worker, m.message);
        if (worker.running === undefined) break;
      }
    }
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
    const worker = new PoolWorker<R>(this.options.filename, this.replies);
    this.adopt(worker);
    return worker;
  }

  /**
   * Makes `worker` (just started, or started ahead) one of the pool's; false when it was started ahead and
   * has already exited, and is let go.
   */
  private adopt(worker: PoolWorker<R>): boolean {
    this.workers.add(worker);
    const { port } = worker;
    port.on('message', (message: unknown) => {
      if (this.receive(worker, message)) this.poll();
    });
    port.unref();
    worker.onExit = (code) => {
      const running = worker.running;
      worker.running = undefined;
      if (!worker.gone) this.forget(worker);
      port.close();
      if (running !== undefined) {
        running.stop.removeEventListener('abort', running.onStop);
        // What a worker throws reaches the main thread as an Error when it was one; anything else arrives as an empty object.
        running.reject(
          worker.error instanceof Error ? worker.error : new Error(`the worker exited with code ${code} while it ran the task`),
        );
      }
      // A worker that failed before it listened would fail again: the next task starts one, and fails alike.
      if (worker.ready) this.replenish();
    };
    // Started ahead and gone before the pool took it: as if it had exited here, before listening.
    if (worker.exitCode === undefined) return true;
    this.forget(worker);
    port.close();
    return false;
  }

  /** Handles one message of `worker`'s; true when it was the reply that ended a task. */
  private receive(worker: PoolWorker<R>, message: unknown): boolean {
    if (!isReply(message)) {
      this.options.onMessage(message);
      return false;
    }
    if (message.kind === 'ready') {
      worker.ready = true;
      return false;
    }
    const running = worker.running;
    if (running === undefined) return false;
    worker.running = undefined;
    running.stop.removeEventListener('abort', running.onStop);
    this.release(worker);
    if (message.kind === 'result') running.resolve(message.result as R);
    else running.reject(new Error(message.message));
    return true;
  }

  /** Back to the idle workers, or (above `min`, after the idle timeout) ended. */
  private release(worker: PoolWorker<R>): void {
    if (worker.gone) return;
    worker.port.unref();
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

/** What a task's handler may post to the main thread while it runs (the pool's `onMessage` receives it). */
export type PostToPool = (message: unknown, transfer?: TransferListItem[]) => void;

/**
 * The worker's side of the pool: runs `handle` on each task, one at a time, and replies with its result
 * (or its failure's message). To be called once, by the script a `WorkerPool` starts.
 *
 * Between tasks the worker sleeps on its `tasks` counter (`Atomics.wait`) and takes each task from its
 * port itself, rather than through its event loop, which it never returns to: a handler must be
 * synchronous (the runner's is: a guest runs to its end, and host calls wait on Atomics too). Waking on
 * the counter starts a task sooner than the event loop's wake-up does, and frees the worker sooner.
 */
export function serveTasks<T, R>(handle: (task: T, post: PostToPool) => R): void {
  if (parentPort === null) throw new Error('serveTasks runs in a worker the pool started');
  const { port, replies, tasks } = workerData as WorkerSide;
  const post: PostToPool = (message, transfer) => port.postMessage(message, transfer);
  const serve = (task: T): void => {
    let reply: WorkerReply<R>;
    try {
      reply = { kind: 'result', result: handle(task, post) };
    } catch (e) {
      reply = { kind: 'failure', message: e instanceof Error ? e.message : String(e) };
    }
    port.postMessage(reply);
    Atomics.add(replies, 0, 1);
  };
  port.postMessage({ kind: 'ready' } satisfies WorkerReply<R>);
  // Once the worker's script has finished loading.
  setImmediate(() => {
    let seen = 0;
    for (;;) {
      for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) serve(m.message as T);
      Atomics.wait(tasks, 0, seen);
      seen = Atomics.load(tasks, 0);
    }
  });
}
