import { BermClient, DEFAULT_URL } from '@berm/client';
import { type Credential, credentialFor, tokenOf } from './login/credential.js';

export interface Connection {
  client: BermClient;
  /** Where the token came from: what a 401 or 403 advises (`explainRefusal`). */
  credential: Credential;
}

/**
 * A client for the daemon at `url` (or the default), sending the token given (`--token`, BERM_TOKEN),
 * else the one `berm login` stored for the address, refreshed first when it has expired.
 */
export async function connect(flags: { url?: string; token?: string }): Promise<Connection> {
  const url = flags.url ?? DEFAULT_URL;
  const credential = await credentialFor(url, flags.token);
  const token = tokenOf(credential);
  return { client: new BermClient(url, token === undefined ? {} : { token }), credential };
}
