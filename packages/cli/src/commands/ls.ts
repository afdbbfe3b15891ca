import type { HarnessSummary } from '@berm/client';
import { BaseCommand } from '../base-command.js';
import { stdoutPaint } from '../colour.js';
import { daemonFlags } from '../daemon.js';
import { ago, deployedByText, grantsText, limitsText, shortDigest } from '@berm/format/harness';
import type { Paint } from '@berm/format/paint';
import { printableDeep } from '@berm/format/printable';

export default class Ls extends BaseCommand {
  static summary = 'List the deployed harnesses.';
  static description =
    "A table of the harnesses bermd holds: name, version, tools, digest, when deployed and by whom (the principal whose token deployed it; unknown for a deploy bermd did not record), when last used, the limits its calls run under (time/memory/result size/calls at once) and what it is granted (syscalls with their hosts, secrets by name). With --json, the daemon's list as it answered it.";
  static examples = ['<%= config.bin %> ls', '<%= config.bin %> ls --json'];

  static flags = { ...daemonFlags };

  async run(): Promise<HarnessSummary[]> {
    const { flags } = await this.parse(Ls);
    const client = await this.connect(flags);
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
const MAX_GRANTS_WIDTH = 60;

function clip(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/** The human view of `berm ls`: one aligned row per harness under a header. */
export function renderList(answer: HarnessSummary[], paint: Paint, now: Date = new Date()): string {
  if (answer.length === 0) return paint.dim('no harnesses deployed');
  // Versions come from images, and every cell from the daemon's answer: all of it is made printable.
  const list = printableDeep(answer);
  // SOURCE only when a harness came from a registry: the table stays as narrow as it was for files.
  const sourced = list.some((h) => h.source !== undefined);
  const header = [
    'NAME',
    'VERSION',
    'TOOLS',
    'DIGEST',
    'DEPLOYED',
    'DEPLOYED BY',
    'LAST USED',
    'LIMITS',
    'GRANTS',
    ...(sourced ? ['SOURCE'] : []),
  ];
  const rows = list.map((h) => {
    const tools = clip(h.tools.join(', '), MAX_TOOLS_WIDTH);
    return [
      h.name,
      h.version || '-',
      tools || '-',
      shortDigest(h.digest),
      ago(h.deployed_at, now),
      deployedByText(h.deployed_by),
      ago(h.last_used_at, now),
      limitsText(h.limits),
      clip(grantsText(h.grants), MAX_GRANTS_WIDTH),
      ...(sourced ? [h.source === undefined ? '-' : `${h.source.reference} (${shortDigest(h.source.digest)})`] : []),
    ];
  });
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('   ');
  return [paint.bold(line(header)), ...rows.map(line)].join('\n');
}
