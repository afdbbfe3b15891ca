import * as Args from '@oclif/core/args';
import { eraseCredential } from '@berm/oci';
import { BaseCommand } from '../../base-command.js';

export default class RegistryLogout extends BaseCommand {
  static summary = 'Forget the credential stored for an OCI registry.';
  static description =
    "Removes HOST's credential from docker's config (and from the credential helper it names for the host). Nothing stored for HOST is not an error.";
  static examples = ['<%= config.bin %> registry logout ghcr.io'];

  static args = {
    host: Args.string({ description: 'the registry host', required: true }),
  };

  async run(): Promise<{ host: string; removed: boolean }> {
    const { args } = await this.parse(RegistryLogout);
    const removed = await eraseCredential(args.host);
    if (!this.jsonEnabled()) this.log(removed ? `logged out of ${args.host}` : `no credential stored for ${args.host}`);
    return { host: args.host, removed };
  }
}
