import * as Flags from '@oclif/core/flags';
import { DEFAULT_URL } from '@berm/client';
import { tokenFlag } from './token-flag.js';

/** The flags of every command that talks to bermd. */
export const daemonFlags = {
  url: Flags.string({
    description: `address of bermd's control API [default: ${DEFAULT_URL}]`,
    env: 'BERM_URL',
    helpValue: 'URL',
  }),
  token: tokenFlag,
};
