import type { CommandContext, Parsed } from '../context.js';

export async function mcp(
  { flags }: Parsed<unknown, { url?: string; token?: string }>,
  _ctx: CommandContext,
): Promise<{ endpoint: string }> {
  // Loaded here rather than at the top, so that what the relay costs to load is its own.
  const [{ DEFAULT_URL }, { credentialFor, TokenSource }, { runBridge }] = await Promise.all([
    import('@berm/client'),
    import('../login/credential.js'),
    import('../mcp-bridge.js'),
  ]);
  const url = flags.url ?? DEFAULT_URL;
  // A stored login that cannot be refreshed now is still held: bermd's refusal will say what to do.
  const credential = await credentialFor(url, flags.token).catch(() => credentialFor(url, flags.token, undefined, { refresh: false }));
  const endpoint = await runBridge(url, new TokenSource(credential));
  return { endpoint };
}
