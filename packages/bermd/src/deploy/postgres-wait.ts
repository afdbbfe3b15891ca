/**
 * The PostgreSQL store's wait for its database at start (`--store-wait`): a database that is starting, or
 * coming back, is tried again on a doubling delay until it answers or the wait runs out, saying once
 * that it waits. A database that answers with a refusal (a wrong password, no such database, a newer
 * schema) is not waited for: the refusal is the answer.
 */
import { backoff } from '@berm/protocol';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { BermdError } from '../errors.js';
import { isUnreachable, reasonOf } from './postgres-errors.js';

/** The delays between tries while waiting. */
const WAIT_BACKOFF = { firstMs: 250, maxMs: 2000 };

export interface StoreWait {
  /** The store, named without its password. */
  location: string;
  logger: Logger;
  /** How long to keep trying a database out of reach; 0: one try. */
  waitMs: number;
}

/**
 * Runs `attempt` until it succeeds, trying again while the database is out of reach and `waitMs` lasts.
 * Throws what a refusal threw, or `store-unavailable` when the wait ran out.
 */
export async function waitForStore(attempt: () => Promise<void>, { location, logger, waitMs }: StoreWait): Promise<void> {
  const deadline = Date.now() + waitMs;
  let told = false;
  for (let tries = 0; ; tries++) {
    try {
      await attempt();
      if (told) logger.info({ store: location }, 'the store answers; starting');
      return;
    } catch (e) {
      if (!isUnreachable(e)) throw e;
      const delay = backoff(tries, WAIT_BACKOFF, deadline - Date.now());
      if (delay === null) {
        throw new BermdError(
          'store-unavailable',
          `the store ${location} did not answer within ${waitMs / 1000}s (--store-wait): ${reasonOf(e)}`,
          {
            store: location,
          },
        );
      }
      logger[told ? 'debug' : 'warn'](
        { store: location, err: reasonOf(e), wait_seconds: Math.round(waitMs / 1000) },
        'the store does not answer; waiting for it (up to --store-wait)',
      );
      told = true;
      // Waiting here is the point: the database is starting, or coming back.
      await sleep(delay);
    }
  }
}
