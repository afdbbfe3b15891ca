import { DEFAULT_URL } from '@berm/client';
import { printable } from '@berm/format/printable';
import type { CommandContext, Parsed } from '../context.js';
import { CliError } from '../failure.js';
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

export interface LoginFlags {
  url?: string;
  'client-id'?: string;
  scope?: string[];
  open: boolean;
}

export async function login({ flags }: Parsed<unknown, LoginFlags>, ctx: CommandContext): Promise<LoginResult> {
  const store = new LoginStore();
  const found = await discover(flags.url ?? DEFAULT_URL);
  const client = await clientFor(found, store, flags['client-id']);
  let tokens: Awaited<ReturnType<typeof authorize>>;
  try {
    tokens = await authorize({
      found,
      client,
      scope: scopesToAsk(flags.scope, found),
      announce: (url) => announce(url, found, flags.open, ctx),
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
  if (!ctx.json) {
    const scopes = result.scopes.length > 0 ? result.scopes.join(' ') : 'none named';
    const expiry =
      result.expires_at === null
        ? ''
        : `; the access token expires at ${result.expires_at}${login.refresh_token ? ' and is refreshed then' : ''}`;
    ctx.log(
      printable(`logged in to bermd at ${result.url} through ${result.issuer} (scopes: ${scopes})${expiry}; stored in ${result.file}`),
    );
  }
  return result;
}

/** Tells the user, on stderr (stdout is the result's), the URL to open; opens it when asked. */
async function announce(url: URL, found: Discovered, open: boolean, ctx: CommandContext): Promise<void> {
  const minutes = Math.round(CALLBACK_WAIT_MS / 60_000);
  process.stderr.write(
    printable(`${ctx.bin} login: open this URL in a browser to log in to bermd at ${found.daemon} through ${found.issuer}:`) +
      `\n\n  ${printable(url.href)}\n\n` +
      `waiting for the browser to come back (up to ${minutes} minutes; Ctrl-C gives up)\n`,
  );
  if (!open) return;
  try {
    const { default: openUrl } = await import('open');
    await openUrl(url.href);
  } catch (e) {
    process.stderr.write(
      `${printable(`${ctx.bin} login: could not open a browser (${(e as Error).message}); open the URL above yourself`)}\n`,
    );
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
