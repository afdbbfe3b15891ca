import * as Flags from '@oclif/core/flags';
import { DEFAULT_URL } from '@berm/client';
import { BaseCommand } from '../base-command.js';
import { CliError } from '../failure.js';
import { printable } from '@berm/format/printable';
import { clientFor, forgetClient } from '../login/client.js';
import { type Discovered, discover } from '../login/discover.js';
import { authorize, CALLBACK_WAIT_MS } from '../login/flow.js';
import { LoginStore } from '../login/store.js';
import { storedLogin } from '../login/tokens.js';

export interface LoginResult {
  url: string;
  issuer: string;
  resource: string;
  scopes: string[];
  expires_at: string | null;
  file: string;
}

export default class Login extends BaseCommand {
  static summary = 'Log in to a bermd whose tokens an authorization server issues.';
  static description =
    "Finds the authorization server bermd names (its 401's resource_metadata, then its metadata and the server's), registers berm there when the server offers dynamic registration (once per server; otherwise give --client-id), and prints the URL to open in a browser (--open opens it). berm listens on a loopback port for the browser to come back, checks the state, exchanges the code (PKCE, S256) for tokens meant for bermd (the resource parameter), and stores them in the user's config directory ($XDG_CONFIG_HOME/berm/logins.json, else ~/.config/berm/logins.json; mode 0600). Every command that talks to bermd then uses them when no --token or BERM_TOKEN is given, refreshed when they expire. Asks for the scopes bermd lists unless --scope names others. The tokens are never printed.";
  static examples = [
    '<%= config.bin %> login',
    '<%= config.bin %> login --url https://berm.example.com --open',
    '<%= config.bin %> login --scope berm:read --scope berm:call',
    '<%= config.bin %> login --client-id berm-cli',
  ];

  static flags = {
    url: Flags.string({
      description: `address of bermd's control API [default: ${DEFAULT_URL}]`,
      env: 'BERM_URL',
      helpValue: 'URL',
    }),
    'client-id': Flags.string({
      description:
        'log in as this client, registered with the authorization server as a public client with the redirect URI http://127.0.0.1/callback (any port); needed where the server offers no dynamic registration',
      helpValue: 'ID',
    }),
    scope: Flags.string({
      description: "a scope to ask for (repeatable; a space-separated list too) [default: those bermd's metadata lists]",
      helpValue: 'SCOPE',
      multiple: true,
    }),
    open: Flags.boolean({ description: 'open the URL in the default browser rather than only printing it', default: false }),
  };

  async run(): Promise<LoginResult> {
    const { flags } = await this.parse(Login);
    const store = new LoginStore();
    const found = await discover(flags.url ?? DEFAULT_URL);
    const client = await clientFor(found, store, flags['client-id']);
    let tokens: Awaited<ReturnType<typeof authorize>>;
    try {
      tokens = await authorize({
        found,
        client,
        scope: scopesToAsk(flags.scope, found),
        announce: (url) => this.announce(url, found, flags.open),
      });
    } catch (e) {
      if (e instanceof CliError && e.details.oauth_error === 'invalid_client' && flags['client-id'] === undefined) {
        // The server no longer knows the client registered before: the next login registers anew.
        await forgetClient(store, found.issuer);
        throw new CliError(e.code, `${e.message}; the client berm had registered there is forgotten: run berm login again`, e.details);
      }
      throw e;
    }
    const login = storedLogin(found, client, tokens);
    await store.update((held) => {
      held.logins[found.daemon] = login;
    });
    const result: LoginResult = {
      url: found.daemon,
      issuer: found.issuer,
      resource: found.resource,
      scopes: (login.scope ?? '').split(' ').filter(Boolean),
      expires_at: login.expires_at ?? null,
      file: store.file,
    };
    if (!this.jsonEnabled()) {
      const scopes = result.scopes.length > 0 ? result.scopes.join(' ') : 'none named';
      const expiry =
        result.expires_at === null
          ? ''
          : `; the access token expires at ${result.expires_at}${login.refresh_token ? ' and is refreshed then' : ''}`;
      this.log(
        printable(`logged in to bermd at ${result.url} through ${result.issuer} (scopes: ${scopes})${expiry}; stored in ${result.file}`),
      );
    }
    return result;
  }

  /** Tells the user, on stderr (stdout is the result's), the URL to open; opens it when asked. */
  private async announce(url: URL, found: Discovered, open: boolean): Promise<void> {
    const minutes = Math.round(CALLBACK_WAIT_MS / 60_000);
    process.stderr.write(
      printable(`${this.config.bin} login: open this URL in a browser to log in to bermd at ${found.daemon} through ${found.issuer}:`) +
        `\n\n  ${printable(url.href)}\n\n` +
        `waiting for the browser to come back (up to ${minutes} minutes; Ctrl-C gives up)\n`,
    );
    if (!open) return;
    try {
      const { default: openUrl } = await import('open');
      await openUrl(url.href);
    } catch (e) {
      process.stderr.write(
        `${printable(`${this.config.bin} login: could not open a browser (${(e as Error).message}); open the URL above yourself`)}\n`,
      );
    }
  }
}

/**
 * The scopes to ask for: those named (each flag may hold a space-separated list), else those bermd's
 * metadata lists; and `offline_access` where the server offers it, which is how an OpenID provider is
 * asked for a refresh token. Undefined: the server's default.
 */
export function scopesToAsk(named: readonly string[] | undefined, found: Discovered): string | undefined {
  const asked = (named ?? []).flatMap((s) => s.split(/[\s,]+/)).filter(Boolean);
  const scopes = asked.length > 0 ? asked : [...found.scopesSupported];
  if ((found.metadata.scopes_supported ?? []).includes('offline_access') && !scopes.includes('offline_access'))
    scopes.push('offline_access');
  return scopes.length > 0 ? [...new Set(scopes)].join(' ') : undefined;
}
