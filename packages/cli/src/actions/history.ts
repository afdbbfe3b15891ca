import type { HistoryEntry } from '@berm/client';
import { renderHistory } from '@berm/format/history';
import { printable } from '@berm/format/printable';
import { stdoutPaint } from '../colour.js';
import type { CommandContext, Parsed } from '../context.js';
import { explainNoHistory, readHistory } from '../history-read.js';

export interface HistoryFlags {
  url?: string;
  token?: string;
  limit?: number;
  all: boolean;
}

export async function history({ args, flags }: Parsed<{ name: string }, HistoryFlags>, ctx: CommandContext): Promise<HistoryEntry[]> {
  const client = await ctx.connect(flags);
  let read: Awaited<ReturnType<typeof readHistory>>;
  let empty: string | undefined;
  try {
    read = await readHistory(client, args.name, { limit: flags.limit, all: flags.all });
    if (read.entries.length === 0) empty = await explainNoHistory(client, args.name);
  } finally {
    await client.close();
  }
  if (!ctx.json) {
    const paint = await stdoutPaint();
    if (empty !== undefined) ctx.log(paint.dim(printable(empty)));
    else {
      const more = read.more ? `older entries: ${ctx.bin} history ${args.name} --all` : undefined;
      ctx.log(renderHistory(read.entries, paint, more));
    }
  }
  return read.entries;
}
