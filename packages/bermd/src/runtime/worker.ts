/**
 * A pool worker (pool.ts): runs one call per task, synchronously, and posts the call's logs, events and
 * nested-call reach to the main thread as they happen (so they survive the call timing out), then its
 * result, on the same port: the main thread has every message of a call once its result is in.
 */
import { Chain } from './chain.js';
import { serveTasks } from './pool.js';
import type { Task, TaskResult } from './worker-messages.js';

serveTasks<Task, TaskResult>((task, post) => {
  const chain = new Chain(task.callId, task.programs, task.limits, post, task.barred, task.traced === true);
  return { outcome: chain.invoke(chain.program(task.programs[0]!.name)!, task.tool, task.args, 0, task.key, task.export) };
});
