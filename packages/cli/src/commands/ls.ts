import type { HarnessSummary } from '@berm/client';
import { BaseCommand } from '../base-command.js';
import { stdoutPaint } from '../colour.js';
import { ago, connect, daemonFlags, shortDigest } from '../daemon.js';
import type { Paint } from '../format/paint.js';

export default class Ls extends BaseCommand {
  static summary = 'List the deployed harnesses.';
  static description = 'A table of the harnesses bermd holds: name, version, tools, digest, when deployed and when last used. With --json, the daemon\'s list as it answered it.';
  static examples = ['<%= config.bin %> ls', '<%= config.bin %> ls --json'];

  static flags = { ...daemonFlags };

  async run(): Promise<HarnessSummary[]> {
    const { flags } = await this.parse(Ls);
    const client = connect(flags.url);
    let list: HarnessSummary[];
    try {
      list = await client.list();
    } finally {
      await client.close();
    }
    if (!this.jsonEnabled()) this.log(renderList(list, await stdoutPaint()));
    return list;
  }
}

const MAX_TOOLS_WIDTH = 40;

/** The human view of `berm ls`: one aligned row per harness under a header. */
export function renderList(list: HarnessSummary[], paint: Paint, now: Date = new Date()): string {
  if (list.length === 0) return paint.dim('no harnesses deployed');
  const header = ['NAME', 'VERSION', 'TOOLS', 'DIGEST', 'DEPLOYED', 'LAST USED'];
  const rows = list.map((h) => {
    let tools = h.tools.join(', ');
    if (tools.length > MAX_TOOLS_WIDTH) tools = `${tools.slice(0, MAX_TOOLS_WIDTH - 1)}…`;
    return [h.name, h.version || '-', tools || '-', shortDigest(h.digest), ago(h.deployed_at, now), ago(h.last_used_at, now)];
  });
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('   ');
  return [paint.bold(line(header)), ...rows.map(line)].join('\n');
}
