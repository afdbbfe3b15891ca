import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import { BaseCommand } from '../base-command.js';
import { HISTORY_LIMIT } from '../flag-values.js';
import { daemonFlags } from '../daemon-flags.js';
import { history } from '../actions/history.js';

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
      ...HISTORY_LIMIT,
      description: 'entries per page asked of bermd (1 to 500; bermd gives 50 unless told); without --all, the most shown',
      helpValue: 'N',
    }),
    all: Flags.boolean({ description: 'read every page bermd keeps, oldest included', default: false }),
  };

  async run() {
    return this.act(await this.parse(History), history);
  }
}
