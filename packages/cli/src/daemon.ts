import * as Flags from '@oclif/core/flags';
import { BermClient, DEFAULT_URL } from '@berm/client';

/** The flags of every command that talks to bermd. The token comes from BERM_TOKEN only, so it stays out of shell history. */
export const daemonFlags = {
  url: Flags.string({
    description: `address of bermd's control API [default: ${DEFAULT_URL}]`,
    env: 'BERM_URL',
    helpValue: 'URL',
  }),
};

/** A client for the daemon at `url` (or the default), authenticated with BERM_TOKEN when it is set. */
export function connect(url: string | undefined): BermClient {
  const token = process.env.BERM_TOKEN;
  return new BermClient(url ?? DEFAULT_URL, token ? { token } : {});
}
