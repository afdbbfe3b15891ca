import type { ReceiptView } from '@berm/client';
import { renderReceipts } from '@berm/format/receipts';
import { stdoutPaint } from '../colour.js';
import type { CommandContext, Parsed } from '../context.js';

export interface ReceiptsFlags {
  url?: string;
  token?: string;
  key?: string;
  bodies: boolean;
  limit?: number;
}

export async function receipts({ args, flags }: Parsed<{ name: string }, ReceiptsFlags>, ctx: CommandContext): Promise<ReceiptView[]> {
  const client = await ctx.connect(flags);
  let receipts: ReceiptView[];
  try {
    ({ receipts } = await client.receipts(args.name, { key: flags.key, bodies: flags.bodies, limit: flags.limit }));
  } finally {
    await client.close();
  }
  if (!ctx.json) {
    const empty =
      flags.key === undefined
        ? `no receipts of ${args.name}: none of its external_write tools was called within bermd's --receipt-retention`
        : `no receipt of ${args.name} for the key ${JSON.stringify(flags.key)}`;
    ctx.log(renderReceipts(receipts, await stdoutPaint(), { bodies: flags.bodies, empty }));
  }
  return receipts;
}
