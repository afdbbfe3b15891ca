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

/** `2026-01-02T03:04:05Z` as "5 minutes ago", the way `docker ps` says it. */
export function ago(iso: string | null, now: Date = new Date()): string {
  if (iso === null) return 'never';
  const seconds = Math.round((now.getTime() - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 5) return 'just now';
  const units: [string, number][] = [
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ];
  for (const [unit, size] of units) {
    const n = Math.floor(seconds / size);
    if (n >= 1) return `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  }
  return iso;
}

/** `sha256:0123456789abcdef…` as `0123456789ab`, as docker shortens image ids. */
export function shortDigest(digest: string): string {
  return digest.replace(/^sha256:/, '').slice(0, 12);
}
