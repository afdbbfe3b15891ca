/**
 * A pool worker (pool.ts): runs one call per task, synchronously, and posts the call's logs, events and
 * nested-call reach to the main thread as they happen (so they survive the call timing out), then its
 * result, on the same port: the main thread has every message of a call once its result is in.
 */
import { serveTasks } from './pool.js';
import { runTask } from './task.js';
import type { Task, TaskResult } from './worker-messages.js';

serveTasks<Task, TaskResult>(runTask);
