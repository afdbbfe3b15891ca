import { DEFAULT_URL } from '@berm/client';
import type { CommandContext, Parsed } from '../context.js';
import { loginKey } from '../login/key.js';
import { LoginStore } from '../login/store.js';

export async function logout(
  { flags }: Parsed<unknown, { url?: string }>,
  ctx: CommandContext,
): Promise<{ url: string; removed: boolean; file: string }> {
  const url = loginKey(flags.url ?? DEFAULT_URL);
  const store = new LoginStore();
  // Nothing stored: nothing to change, and no file or directory made for it.
  const removed =
    Object.hasOwn((await store.read()).logins, url) &&
    (await store.update((held) => {
      const had = Object.hasOwn(held.logins, url);
      delete held.logins[url];
      return had;
    }));
  if (!ctx.json)
    ctx.log(removed ? `logged out of bermd at ${url}: its tokens are removed from ${store.file}` : `no login stored for bermd at ${url}`);
  return { url, removed, file: store.file };
}
