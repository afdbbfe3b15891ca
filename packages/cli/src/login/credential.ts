/**
 * Which token a command sends to bermd: the one given (`--token`, or BERM_TOKEN), else the one
 * `berm login` stored for that address (refreshed when it has expired), else none. Where it came from
 * decides what a refusal advises.
 */
import { McpHttpError } from '../mcp-http/errors.js';
import { loginKey } from './key.js';
import { askForScope } from './refusal.js';
import { LoginStore, type StoredLogin } from './store.js';
import { expiring, freshLogin } from './tokens.js';

export type Credential =
  | { kind: 'given'; key: string; token: string }
  | { kind: 'stored'; key: string; login: StoredLogin }
  | { kind: 'none'; key: string };

/** The credential for the bermd at `url`; `refresh: false` takes a stored login as it is, expired or not. */
export async function credentialFor(
  url: string,
  given: string | undefined,
  store: LoginStore = new LoginStore(),
  options: { refresh?: boolean } = {},
): Promise<Credential> {
  const key = loginKey(url);
  if (given !== undefined && given !== '') return { kind: 'given', key, token: given };
  const login = options.refresh === false ? (await store.read()).logins[key] : await freshLogin(store, key);
  return login === undefined ? { kind: 'none', key } : { kind: 'stored', key, login };
}

/** The bearer token a credential sends, if any. */
export function tokenOf(credential: Credential): string | undefined {
  if (credential.kind === 'given') return credential.token;
  if (credential.kind === 'stored') return credential.login.access_token;
  return undefined;
}

/**
 * The token of a long-running relay (`berm mcp`, through mcp-bridge.ts's `BridgeTokens`): the given one
 * as it is, or the stored login's, refreshed once it expires and again when bermd refuses it. It never
 * throws from `token`: a login that cannot be refreshed sends what it holds, and bermd's refusal is
 * answered with why (`unauthorized`).
 */
export class TokenSource {
  private credential: Credential;
  private lastSent?: string;
  /** Why the last refresh failed, for the advice a refusal carries. */
  private problem?: string;

  constructor(
    credential: Credential,
    private readonly store: LoginStore = new LoginStore(),
  ) {
    this.credential = credential;
  }

  async token(): Promise<string | undefined> {
    const { credential } = this;
    // The file is read again only once the token held is expiring: a relay sends many requests.
    if (credential.kind === 'stored' && expiring(credential.login)) await this.follow(undefined).catch(() => {});
    this.lastSent = tokenOf(this.credential);
    return this.lastSent;
  }

  async onUnauthorized(): Promise<void> {
    const refused = this.lastSent;
    if (this.credential.kind !== 'stored' || refused === undefined) throw await givenUp();
    await this.follow(refused).catch(() => {});
    if (tokenOf(this.credential) === refused) throw await givenUp();
  }

  unauthorized(where: string): string {
    const { key } = this.credential;
    switch (this.credential.kind) {
      case 'stored':
        return `bermd at ${where} refused the login stored for ${key} (401): ${this.problem ?? `run berm login --url ${key}`}`;
      case 'given':
        return `bermd at ${where} refused the token (401): set BERM_TOKEN (or --token) to a token it holds, or unset it to use what berm login stores`;
      case 'none':
        return `bermd at ${where} asks for a token (401): run berm login --url ${key}, or set BERM_TOKEN`;
    }
  }

  /** How a stored login gets `scope`; undefined for a given token, its operator's to change. */
  lacking(scope: string): string | undefined {
    if (this.credential.kind !== 'stored') return undefined;
    return askForScope(this.credential.key, this.credential.login.scope, scope);
  }

  private async follow(rejected: string | undefined): Promise<void> {
    try {
      const login = await freshLogin(this.store, this.credential.key, rejected);
      // Logged out meanwhile: the token last held is sent, and bermd's refusal says what to do.
      if (login !== undefined) this.credential = { kind: 'stored', key: this.credential.key, login };
      this.problem = undefined;
    } catch (e) {
      this.problem = (e as Error).message;
      throw e;
    }
  }
}

/** What the transport throws for a 401 when there is no better token: the relay reads its status. */
async function givenUp(): Promise<Error> {
  return new McpHttpError('refused the token (401), and there is no other to send', { status: 401 });
}
