import * as Flags from '@oclif/core/flags';
import { DEFAULT_URL } from '@berm/client';
import { BaseCommand } from '../base-command.js';
import { loginKey } from '../login/key.js';
import { LoginStore } from '../login/store.js';

export default class Logout extends BaseCommand {
  static summary = 'Forget the login stored for a bermd.';
  static description =
    'Removes the tokens berm login stored for the address from the config directory; commands then send no token there unless --token or BERM_TOKEN gives one. The client berm registered with the authorization server is kept for the next login. The tokens are not revoked at the server: they lapse there when they expire. Nothing stored for the address is not an error.';
  static examples = ['<%= config.bin %> logout', '<%= config.bin %> logout --url https://berm.example.com'];

  static flags = {
    url: Flags.string({
      description: `address of bermd's control API [default: ${DEFAULT_URL}]`,
      env: 'BERM_URL',
      helpValue: 'URL',
    }),
  };

  async run(): Promise<{ url: string; removed: boolean; file: string }> {
    const { flags } = await this.parse(Logout);
    const url = loginKey(flags.url ?? DEFAULT_URL);
    const store = new LoginStore();
    // Nothing stored: nothing to change, and no file or directory made for it.
    const removed =
      Object.hasOwn((await store.read()).logins, url) &&
      (await store.update((held) => {
        const had = Object.hasOwn(held.logins, url);
        delete held.logins[url];
        return had;
      }));
    if (!this.jsonEnabled())
      this.log(
        removed ? `logged out of bermd at ${url}: its tokens are removed from ${store.file}` : `no login stored for bermd at ${url}`,
      );
    return { url, removed, file: store.file };
  }
}
