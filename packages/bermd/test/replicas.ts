// bermd replicas for the tests: several real processes on one PostgreSQL database, and bounded waits
// for what a replica learns through the database (a poll of something a test can read, or an event,
// never a sleep in place of one).
import { startDaemon, type RunningDaemon, type StartOptions } from './daemon.js';

/** Starts `n` bermd processes on the database at `url`, all at once (so their start-up migrations meet). */
export async function startReplicas(
  n: number,
  url: string,
  options: Omit<StartOptions, 'store' | 'stateDir'> = {},
): Promise<RunningDaemon[]> {
  return Promise.all(Array.from({ length: n }, () => startDaemon({ ...options, store: url })));
}

export async function stopAll(daemons: RunningDaemon[]): Promise<void> {
  await Promise.all(daemons.map((d) => d.stop()));
}

/**
 * How long a test waits for something a replica is told (a notification, a reconnection): far more than
 * it takes, so that only a failure reaches it. The replicas run without periodic reconciliation
 * (`--reconcile-interval 0`), so nothing but what the test is about can bring it.
 */
export const FOLLOW_LIMIT_MS = 20_000;

/** The arguments every replica of these tests runs with: no periodic reconciliation (see `FOLLOW_LIMIT_MS`). */
export const NO_RECONCILIATION = ['--reconcile-interval', '0'];

/**
 * Asks `check` until it answers something other than undefined, and answers that. Bounded: after
 * `limitMs` it throws, saying what it waited for and what it saw last. Between asks it yields briefly,
 * so a replica under test is not flooded with requests.
 */
export async function until<T>(what: string, check: () => Promise<T | undefined>, limitMs = FOLLOW_LIMIT_MS): Promise<T> {
  const deadline = Date.now() + limitMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const answer = await check();
      if (answer !== undefined) return answer;
    } catch (e) {
      last = e;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`waited ${limitMs} ms for ${what}${last === undefined ? '' : `; last failure: ${(last as Error).message}`}`);
}

/** The names a replica lists. */
export async function listed(d: RunningDaemon): Promise<string[]> {
  return ((await (await fetch(`${d.url}/harnesses`)).json()) as { name: string }[]).map((h) => h.name);
}

/** What a replica says of one harness; undefined while it has none by that name. */
export async function detail(d: RunningDaemon, name: string): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${d.url}/harnesses/${name}`);
  if (res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  return (await res.json()) as Record<string, unknown>;
}

/**
 * `promise`, or a failure naming what was awaited once `limitMs` has passed without it: a bound on an
 * event's wait (a notification, a log line, an exit), never a wait in its place.
 */
export async function within<T>(what: string, promise: Promise<T>, limitMs = FOLLOW_LIMIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${limitMs} ms for ${what}`)), limitMs);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}
