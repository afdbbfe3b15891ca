import * as Flags from '@oclif/core/flags';
import { DEFAULT_URL } from '@berm/client';
import { BaseCommand } from '../base-command.js';
import { logout } from '../actions/logout.js';

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

  async run() {
    return this.act(await this.parse(Logout), logout);
  }
}
