/**
 * One task as it runs: the called tool and its chain (chain.ts), synchronously, on whichever thread runs
 * it. A pool worker runs its tasks so (worker.ts); a runner that runs calls on its own thread runs them so
 * too (inline.ts), which is why this is apart from the worker's script.
 */
import { Chain } from './chain.js';
import type { PostToPool } from './pool.js';
import type { Task, TaskResult } from './worker-messages.js';

export function runTask(task: Task, post: PostToPool): TaskResult {
  const chain = new Chain(task.callId, task.programs, task.limits, post, task.barred, task.traced === true);
  const outcome = chain.invoke(chain.program(task.programs[0]!.name)!, task.tool, task.args, 0, task.key, task.export);
  const marks = chain.takeMarks();
  return marks === undefined ? { outcome } : { outcome, marks };
}
