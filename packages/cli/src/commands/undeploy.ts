import * as Args from '@oclif/core/args';
import { BaseCommand } from '../base-command.js';
import { daemonFlags } from '../daemon.js';

export default class Undeploy extends BaseCommand {
  static summary = 'Remove a deployed harness.';
  static description =
    'Removes NAME from bermd: its tools leave the MCP endpoint and its image leaves the store. Exits 1 when no harness has that name.';
  static examples = ['<%= config.bin %> undeploy echo'];

  static args = {
    name: Args.string({ description: 'the harness to remove', required: true }),
  };

  static flags = { ...daemonFlags };

  async run(): Promise<{ name: string; undeployed: true }> {
    const { args, flags } = await this.parse(Undeploy);
    const client = await this.connect(flags);
    try {
      await client.undeploy(args.name);
    } finally {
      await client.close();
    }
    if (!this.jsonEnabled()) this.log(`undeployed ${args.name}`);
    return { name: args.name, undeployed: true };
  }
}
