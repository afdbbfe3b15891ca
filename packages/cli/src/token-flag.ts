import * as Flags from '@oclif/core/flags';

/**
 * The bearer token a command sends to bermd: a static token from its operator, or an access token.
 * Without it, the login `berm login` stored for the address is used. Its own module, so that commands
 * that ask a daemon only now and then (inspect, breaks) take the flag without loading the client.
 */
export const tokenFlag = Flags.string({
  description:
    'bearer token for bermd, static or an OAuth access token; prefer BERM_TOKEN, which stays out of shell history [default: the login berm login stored for the address]',
  env: 'BERM_TOKEN',
  helpValue: 'TOKEN',
});
