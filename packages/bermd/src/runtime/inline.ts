/**
 * `InlinePool`: runs a runner's tasks on the runner's own thread, for a process that runs a call or two
 * and then ends (`crab run`), where starting a worker thread costs more than the call. The task runs as a
 * worker runs it (task.ts), and its time limit is kept by V8's watchdog: `vm`'s `timeout` terminates the
 * script running past it, as terminating a worker does, wherever the guest is (a loop, a host call). The
 * call's own timer, due by then, stops the call, which answers as a worker's termination makes it answer.
 *
 * What it cannot serve is a host call forwarded off the guest's thread (`berm.http.fetch`, an ask): the
 * guest would wait for an answer the thread it waits on is to give. The runner sends a call that can
 * reach one to its workers instead (runner.ts, by `PreparedHarness.forwards`), so this pool never sees one.
 *
 * The messages a task posts are delivered when it ends (or is stopped), before its result, as a worker's
 * are: the main thread has every message of a call once its result is in.
 */
import { Script } from 'node:vm';
import { TaskStopped, type TaskPool } from './pool.js';
import type { Stop } from './stop.js';
import { runTask } from './task.js';
import type { Task, TaskResult } from './worker-messages.js';

/**
 * Where the task's function is while it runs, for a script that only calls it: the watchdog's timeout is an
 * option of running a script. A slot of this realm's global, keyed by a symbol no guest or module names,
 * rather than a context of its own, which V8 would build (a global object and its built-ins) for a call.
 */
const SLOT = Symbol.for('bermd.inline.task');
const CALL = new Script(`globalThis[Symbol.for(${JSON.stringify(SLOT.description)})]()`, { filename: 'bermd-inline-call' });
const slot = globalThis as unknown as Record<symbol, (() => TaskResult) | undefined>;

export class InlinePool implements TaskPool<Task, TaskResult> {
  private closed = false;

  constructor(private readonly onMessage: (message: unknown) => void) {}

  /**
   * Runs `task` once the caller's turn is over (after it has armed its own timer), for at most `timeoutMs`;
   * rejects with `TaskStopped` when `stop` fired first, or, past the limit, once the call's timer has fired it.
   */
  run(task: Task, stop: Stop, timeoutMs: number): Promise<TaskResult> {
    return new Promise<TaskResult>((resolve, reject) => {
      queueMicrotask(() => {
        if (this.closed) return reject(new TaskStopped('the pool is closed'));
        if (stop.aborted) return reject(new TaskStopped('the task was stopped before it started'));
        const messages: unknown[] = [];
        let result: TaskResult;
        slot[SLOT] = () => runTask(task, (message) => messages.push(message));
        try {
          result = CALL.runInThisContext({ timeout: Math.max(1, Math.ceil(timeoutMs)) }) as TaskResult;
        } catch (e) {
          for (const message of messages) this.onMessage(message);
          // A worker's failure reaches the pool as its message alone (pool.ts): so does this one.
          if ((e as { code?: unknown } | null)?.code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT')
            return reject(new Error(e instanceof Error ? e.message : String(e)));
          const stopped = (): void => reject(new TaskStopped('the task was stopped'));
          if (stop.aborted) stopped();
          else stop.addEventListener('abort', stopped);
          return;
        } finally {
          delete slot[SLOT];
        }
        for (const message of messages) this.onMessage(message);
        resolve(result);
      });
    });
  }

  /** No thread to end: a task under way has already ended (this thread is the one closing). */
  async destroy(): Promise<void> {
    this.closed = true;
  }
}
