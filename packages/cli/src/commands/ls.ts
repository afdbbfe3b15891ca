import { BaseCommand } from '../base-command.js';
import { ls } from '../actions/ls.js';
import { daemonFlags } from '../daemon-flags.js';

export default class Ls extends BaseCommand {
  static summary = 'List the deployed harnesses.';
  static description =
    "A table of the harnesses bermd holds: name, version, tools, digest, when deployed and by whom (the principal whose token deployed it; unknown for a deploy bermd did not record), when last used, the limits its calls run under (time/memory/result size/calls at once) and what it is granted (syscalls with their hosts, secrets by name). With --json, the daemon's list as it answered it.";
  static examples = ['<%= config.bin %> ls', '<%= config.bin %> ls --json'];

  static flags = { ...daemonFlags };

  async run() {
    return this.act(await this.parse(Ls), ls);
  }
}
