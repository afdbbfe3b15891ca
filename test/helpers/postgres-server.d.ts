// Types of postgres-server.js, which is JavaScript so that bench/ can use it.
export const POSTGRES_USER: string;

export function postgresBinDir(env?: NodeJS.ProcessEnv): string | undefined;

export interface PostgresServer {
  /** `postgres://berm@127.0.0.1:PORT/postgres`: the maintenance database, to create others from. */
  url: string;
  port: number;
  dir: string;
  /** Starts it again (same port, same data) after `stop`. */
  start(): Promise<string>;
  /** Stops it (`fast`: connections are ended) and waits until it has. */
  stop(mode?: 'fast' | 'immediate' | 'smart'): Promise<string>;
  /** Stops it for good and deletes its directory. */
  remove(): Promise<void>;
}

export function startPostgres(options?: { binDir?: string; port?: number }): Promise<PostgresServer>;
