import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import type { HistoryEntry } from '@berm/client';
import { BaseCommand } from '../base-command.js';
import { stdoutPaint } from '../colour.js';
import { daemonFlags } from '../daemon.js';
import { renderHistory } from '@berm/format/history';
import { printable } from '@berm/format/printable';
import { explainNoHistory, readHistory } from '../history-read.js';

export default class History extends BaseCommand {
  static summary = "Show a harness's deploy history.";
  static description =
    "A table of NAME's deploys, undeploys and rollbacks, newest first: when (UTC), what (forced ones marked), by whom (the principal; unknown when bermd did not record it), through which bermd, the version and digest before and after, and the breaks of recent callers a forced change went past. History outlives an undeploy, so an undeployed name shows it too. --limit sets how many entries are read at once (bermd's page: 50 unless given, at most 500); --all reads every page. With --json, the entries as bermd answers them: with --all, every one it keeps, which is how a history is exported. A name bermd holds no history of exits 1 (not-found), as helm history does for a release it does not know.";
  static examples = [
    '<%= config.bin %> history weather',
    '<%= config.bin %> history weather --limit 10',
    '<%= config.bin %> history weather --all --json > weather-history.json',
  ];

  static args = {
    name: Args.string({ description: 'the harness whose history to show, deployed or undeployed', required: true }),
  };

  static flags = {
    ...daemonFlags,
    limit: Flags.integer({
      description: 'entries per page asked of bermd (1 to 500; bermd gives 50 unless told); without --all, the most shown',
      min: 1,
      helpValue: 'N',
    }),
    all: Flags.boolean({ description: 'read every page bermd keeps, oldest included', default: false }),
  };

  async run(): Promise<HistoryEntry[]> {
    const { args, flags } = await this.parse(History);
    const client = await this.connect(flags);
    let read: Awaited<ReturnType<typeof readHistory>>;
    let empty: string | undefined;
    try {
      read = await readHistory(client, args.name, { limit: flags.limit, all: flags.all });
      if (read.entries.length === 0) empty = await explainNoHistory(client, args.name);
    } finally {
      await client.close();
    }
    if (!this.jsonEnabled()) {
      const paint = await stdoutPaint();
      if (empty !== undefined) this.log(paint.dim(printable(empty)));
      else {
        const more = read.more ? `older entries: ${this.config.bin} history ${args.name} --all` : undefined;
        this.log(renderHistory(read.entries, paint, more));
      }
    }
    return read.entries;
  }
}
