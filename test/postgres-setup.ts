/**
 * One private PostgreSQL server per test run (vitest global setup), for the tests of bermd's PostgreSQL
 * store and its replicas; each test file makes its own database on it (packages/bermd/test/postgres.ts),
 * so files do not see each other's. Its URL reaches the tests through `inject('postgres')`.
 *
 * When no server can be started (no PostgreSQL on the machine), the tests that need one are skipped,
 * saying why, unless BERM_REQUIRE_POSTGRES=1 (CI sets it), which makes this throw and the run fail.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres } from './helpers/postgres-server.js';

export interface ProvidedPostgres {
  /** The maintenance database's URL; null when no server could be started. */
  url: string | null;
  /** Why not, when not. */
  reason: string | null;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: ProvidedPostgres;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  let server: Awaited<ReturnType<typeof startPostgres>>;
  try {
    server = await startPostgres();
  } catch (e) {
    const reason = (e as Error).message;
    if (process.env.BERM_REQUIRE_POSTGRES === '1')
      throw new Error(`BERM_REQUIRE_POSTGRES=1, and no PostgreSQL could be started: ${reason}`);
    project.provide('postgres', { url: null, reason });
    return undefined;
  }
  project.provide('postgres', { url: server.url, reason: null });
  return () => server.remove();
}
