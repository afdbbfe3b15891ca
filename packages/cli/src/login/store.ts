/**
 * Where `berm login` keeps what it obtained: one file, `logins.json`, in the user's config directory
 * (`$XDG_CONFIG_HOME/berm/`, else `~/.config/berm/`), holding the token set of each bermd address and
 * the client registered with each authorization server. The file is the user's alone (0600, in a 0700
 * directory), replaced whole on every change, and changed only under a lock: two berm processes that
 * both find a token expired must not both spend its refresh token, as an authorization server that
 * rotates refresh tokens takes a second use as theft and revokes the grant.
 */
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { CliError } from '../failure.js';

/** What one `berm login` left for a bermd address. Tokens are secrets: nothing prints them. */
export interface StoredLogin {
  /** The authorization server that issued the tokens (its metadata's `issuer`). */
  issuer: string;
  /** The protected resource the tokens are for: the `resource` of bermd's metadata, sent as RFC 8707's `resource`. */
  resource: string;
  client_id: string;
  access_token: string;
  refresh_token?: string;
  /** When the access token expires (ISO 8601), when the server said. */
  expires_at?: string;
  /** The scopes granted, space-separated, when the server said. */
  scope?: string;
}

/** A client registered with an authorization server (RFC 7591), used again by the next login there. */
export interface RememberedClient {
  client_id: string;
  client_secret?: string;
  /** Seconds since the epoch; 0 or absent: the secret does not expire. */
  client_secret_expires_at?: number;
}

export interface Logins {
  /** Keyed by bermd's address (`loginKey`). */
  logins: Record<string, StoredLogin>;
  /** Keyed by issuer. */
  clients: Record<string, RememberedClient>;
}

const FILE_NAME = 'logins.json';

/** How long a lock held by a process that died is honoured, and how long a process waits for one held by another. */
const LOCK_STALE_MS = 10_000;
const LOCK_RETRIES = { retries: 60, minTimeout: 50, maxTimeout: 500, factor: 1.5 };

/** The user's config directory for berm: `$XDG_CONFIG_HOME/berm`, or `~/.config/berm` (the XDG default) when that is unset or relative. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.config'), 'berm');
}

export class LoginStore {
  readonly file: string;

  constructor(readonly dir: string = configDir()) {
    this.file = join(dir, FILE_NAME);
  }

  /** What the file holds now; nothing stored yet reads as empty. */
  async read(): Promise<Logins> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { logins: {}, clients: {} };
      throw this.unreadable((e as Error).message);
    }
    return this.parse(text);
  }

  /**
   * Reads the file, lets `change` change what it holds (and do what must not run twice at once, a
   * refresh), and writes it back, all under the lock; what `change` returns is returned.
   */
  async update<T>(change: (held: Logins) => T | Promise<T>): Promise<T> {
    await this.ensureDir();
    // Only a write needs these; every command that reads a login imports this module.
    const [{ lock }, { default: writeFileAtomic }] = await Promise.all([import('proper-lockfile'), import('write-file-atomic')]);
    let release: () => Promise<void>;
    try {
      // realpath false: the lock is taken before the file first exists.
      release = await lock(this.file, { realpath: false, stale: LOCK_STALE_MS, retries: LOCK_RETRIES });
    } catch (e) {
      throw new CliError(
        'login-store-unreadable',
        `could not lock ${this.file} (${(e as Error).message}): another berm may be holding it; if none runs, remove ${this.file}.lock`,
        { file: this.file },
      );
    }
    try {
      const held = await this.read();
      const result = await change(held);
      await writeFileAtomic(this.file, `${JSON.stringify({ version: 1, ...held }, null, 2)}\n`, { mode: 0o600 });
      return result;
    } finally {
      await release().catch(() => {});
    }
  }

  private async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // A directory made before, by hand or by another tool, holds secrets from now on.
    await chmod(this.dir, 0o700);
  }

  private parse(text: string): Logins {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      throw this.unreadable(`not JSON: ${(e as Error).message}`);
    }
    if (!isRecord(data) || data.version !== 1 || !isRecord(data.logins) || !isRecord(data.clients)) {
      throw this.unreadable('not a berm logins file (version 1)');
    }
    return { logins: data.logins as Logins['logins'], clients: data.clients as Logins['clients'] };
  }

  private unreadable(why: string): CliError {
    return new CliError(
      'login-store-unreadable',
      `cannot read ${this.file} (${why}): remove it, then run berm login again for each bermd you use`,
      { file: this.file },
    );
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
