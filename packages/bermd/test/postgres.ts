// The test run's PostgreSQL server (test/postgres-setup.ts) as a test file sees it: a database of the
// file's own made from its URL (so files running side by side never share one), SQL run straight at a
// database (what a test looks at, or changes behind bermd's back), and `describe` that skips, saying
// why, when the run has no server.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, inject } from 'vitest';

const provided = inject('postgres');

/** The server's maintenance database; null when the run has none. */
export const POSTGRES_URL: string | null = provided.url;

/** `describe`, skipped when the run could not start PostgreSQL (CI requires it, and fails instead). */
export const describePostgres = (name: string, ...rest: unknown[]): void => {
  const run = POSTGRES_URL === null ? describe.skip : describe;
  (run as (n: string, ...r: unknown[]) => void)(POSTGRES_URL === null ? `${name} (skipped: ${provided.reason})` : name, ...rest);
};

/** The URL of a database on the same server. */
export function databaseUrl(database: string, base: string = POSTGRES_URL!): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.href;
}

/** Runs one statement on the database at `url` through a connection of its own. */
export async function sql<R extends pg.QueryResultRow = Record<string, unknown>>(
  url: string,
  text: string,
  values?: unknown[],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** A new empty database (or a copy of `template`, which nothing may be connected to), answered as its URL. */
export async function createDatabase(template?: string, base: string = POSTGRES_URL!): Promise<string> {
  const name = `berm_${randomBytes(6).toString('hex')}`;
  await sql(base, `CREATE DATABASE ${name}${template === undefined ? '' : ` TEMPLATE ${new URL(template).pathname.slice(1)}`}`);
  return databaseUrl(name, base);
}

/** Drops a database made by `createDatabase`, ending whatever is still connected to it. */
export async function dropDatabase(url: string, base: string = POSTGRES_URL!): Promise<void> {
  await sql(base, `DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
}
