import { eraseCredential } from '@berm/oci';
import type { CommandContext, Parsed } from '../context.js';

export async function registryLogout(
  { args }: Parsed<{ host: string }, unknown>,
  ctx: CommandContext,
): Promise<{ host: string; removed: boolean }> {
  const removed = await eraseCredential(args.host);
  if (!ctx.json) ctx.log(removed ? `logged out of ${args.host}` : `no credential stored for ${args.host}`);
  return { host: args.host, removed };
}
