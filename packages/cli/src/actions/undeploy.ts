import type { CommandContext, Parsed } from '../context.js';

export async function undeploy(
  { args, flags }: Parsed<{ name: string }, { url?: string; token?: string }>,
  ctx: CommandContext,
): Promise<{ name: string; undeployed: true }> {
  const client = await ctx.connect(flags);
  try {
    await client.undeploy(args.name);
  } finally {
    await client.close();
  }
  ctx.log(`undeployed ${args.name}`);
  return { name: args.name, undeployed: true };
}
