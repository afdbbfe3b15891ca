/**
 * The piscina worker: runs one call per task, synchronously, and posts the call's logs, events and
 * nested-call reach to the main thread as they happen (so they survive the call timing out).
 */
import { parentPort, type TransferListItem } from 'node:worker_threads';
import { Chain } from './chain.js';
import type { Task, TaskResult, WorkerMessage } from './worker-messages.js';

function send(message: WorkerMessage, transfer?: TransferListItem[]): void {
  parentPort!.postMessage(message, transfer);
}

export default function runTask(task: Task): TaskResult {
  const chain = new Chain(task.callId, task.programs, task.limits, send);
  const outcome = chain.invoke(chain.program(task.programs[0]!.name)!, task.tool, task.args, 0);
  return { outcome, posted: chain.posted };
}
