import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { RECEIPTS_LIMIT } from '../flag-values.js';
import { daemonFlags } from '../daemon-flags.js';
import { receipts } from '../actions/receipts.js';

export default class Receipts extends BaseCommand {
  static summary = "Show the receipts of a harness's external writes.";
  static description =
    "A table of the calls of NAME's external_write tools that bermd keeps a receipt of (within its --receipt-retention), newest first: when each started (UTC), the tool, the principal that called, the idempotency key (marked when bermd made it because the call sent none), how it ended (ok, tool-error or failed with the code, or started while it runs or when it was abandoned), and the replica that ran it. A second call with a key shown here is answered from its receipt. --key shows the receipts of one key; --bodies adds each recorded answer under its row (bermd sends them only when asked). With --json, the receipts as bermd answers them.";
  static examples = [
    '<%= config.bin %> receipts shop',
    '<%= config.bin %> receipts shop --key order-42 --bodies',
    '<%= config.bin %> receipts shop --json',
  ];

  static args = {
    name: Args.string({ description: 'the harness whose receipts to show, deployed or not', required: true }),
  };

  static flags = {
    ...daemonFlags,
    key: Flags.string({ description: 'only the receipts of calls that sent this idempotency key', helpValue: 'K' }),
    bodies: Flags.boolean({ description: 'show each recorded answer too', default: false }),
    limit: Flags.integer({
      ...RECEIPTS_LIMIT,
      description: 'the most receipts shown (1 to 1000; bermd gives 100 unless told)',
      helpValue: 'N',
    }),
  };

  async run() {
    return this.act(await this.parse(Receipts), receipts);
  }
}
