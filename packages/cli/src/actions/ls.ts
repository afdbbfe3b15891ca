import type { HarnessSummary } from '@berm/client';
import { stdoutPaint } from '../colour.js';
import type { CommandContext, Parsed } from '../context.js';
import { ago, deployedByText, grantsText, limitsText, shortDigest } from '@berm/format/harness';
import type { Paint } from '@berm/format/paint';
import { printableDeep } from '@berm/format/printable';

export interface LsFlags {
  url?: string;
  token?: string;
}

export async function ls({ flags }: Parsed<unknown, LsFlags>, ctx: CommandContext): Promise<HarnessSummary[]> {
  const client = await ctx.connect(flags);
  let list: HarnessSummary[];
  try {
    list = await client.list();
  } finally {
    await client.close();
  }
  if (!ctx.json) ctx.log(renderList(list, await stdoutPaint()));
  return list;
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
