import * as Flags from '@oclif/core/flags';
import { DEFAULT_URL } from '@berm/client';
import { BaseCommand } from '../base-command.js';
import { login } from '../actions/login.js';

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

  async run() {
    return this.act(await this.parse(Login), login);
  }
}
