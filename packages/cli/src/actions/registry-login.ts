import { text } from 'node:stream/consumers';
import { Registry, storeCredential } from '@berm/oci';
import type { CommandContext, Parsed } from '../context.js';
import { CliError } from '../failure.js';

export interface RegistryLoginFlags {
  username: string;
  'password-stdin': boolean;
  'insecure-registry': boolean;
}

export async function registryLogin(
  { args, flags }: Parsed<{ host: string }, RegistryLoginFlags>,
  ctx: CommandContext,
): Promise<{ host: string; stored: string }> {
  if (!flags['password-stdin']) {
    throw new CliError('usage', 'give the password on standard input with --password-stdin: crab takes no password as an argument');
  }
  const password = (await text(process.stdin)).replace(/\r?\n$/, '');
  if (password === '') throw new CliError('usage', 'standard input was empty: pipe the password into crab registry login --password-stdin');
  const credential = { username: flags.username, password };
  const registry = new Registry(args.host, { credential, insecure: flags['insecure-registry'] ? [args.host] : [] });
  try {
    await registry.check();
  } finally {
    await registry.close();
  }
  const stored = await storeCredential(args.host, credential);
  if (!ctx.json) ctx.log(`logged in to ${args.host} as ${flags.username}: stored in ${stored}`);
  return { host: args.host, stored };
}
