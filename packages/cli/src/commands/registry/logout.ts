import * as Args from '@oclif/core/args';
import { BaseCommand } from '../../base-command.js';
import { registryLogout } from '../../actions/registry-logout.js';

export default class RegistryLogout extends BaseCommand {
  static summary = 'Forget the credential stored for an OCI registry.';
  static description =
    "Removes HOST's credential from docker's config (and from the credential helper it names for the host). Nothing stored for HOST is not an error.";
  static examples = ['<%= config.bin %> registry logout ghcr.io'];

  static args = {
    host: Args.string({ description: 'the registry host', required: true }),
  };

  async run() {
    return this.act(await this.parse(RegistryLogout), registryLogout);
  }
}
