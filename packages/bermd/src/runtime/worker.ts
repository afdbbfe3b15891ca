/**
 * A pool worker (pool.ts): runs one call per task, synchronously, and posts the call's logs, events and
 * nested-call reach to the main thread as they happen (so they survive the call timing out), then its
 * result, on the same port: the main thread has every message of a call once its result is in.
 */
import { parentPort, type TransferListItem } from 'node:worker_threads';
import { Chain } from './chain.js';
import type { WorkerReply } from './pool.js';
import type { Task, TaskResult, WorkerMessage } from './worker-messages.js';

function send(message: WorkerMessage, transfer?: TransferListItem[]): void {
  parentPort!.postMessage(message, transfer);
}

export function runTask(task: Task): TaskResult {
  const chain = new Chain(task.callId, task.programs, task.limits, send);
  const outcome = chain.invoke(chain.program(task.programs[0]!.name)!, task.tool, task.args, 0);
  return { outcome };
}

if (parentPort !== null) {
  const port = parentPort;
  port.on('message', (task: Task) => {
    let reply: WorkerReply<TaskResult>;
    try {
      reply = { kind: 'result', result: runTask(task) };
    } catch (e) {
      reply = { kind: 'failure', message: e instanceof Error ? e.message : String(e) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ kind: 'ready' } satisfies WorkerReply<TaskResult>);
}
