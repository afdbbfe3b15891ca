/**
 * How a deployed harness is written for people: when, which image, under what limits, granted what.
 * Plain text, shared by the CLI's views and the web page (`@berm/cli/format`). It escapes nothing:
 * the CLI makes a daemon's answer printable before these see it (printable.ts), and the page renders
 * what they return as text.
 */
import type { GrantSet, HarnessLimits } from '@berm/client';
import { formatDuration, formatSize, HARNESS_SETTINGS } from '@berm/protocol';

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

/**
 * Who deployed a harness: the principal's name, or `unknown` where the daemon does not know (null: deployed
 * before it recorded it) or does not say (an older daemon, which answers no `deployed_by`).
 */
export function deployedByText(by: string | null | undefined): string {
  return by ?? 'unknown';
}

/** `sha256:0123456789abcdef…` as `0123456789ab`, as docker shortens image ids. */
export function shortDigest(digest: string): string {
  return digest.replace(/^sha256:/, '').slice(0, 12);
}

/**
 * `10s/64M/1M/2`: time, memory, result size and calls at once, as the daemon's flags and the deploy take
 * them (one part per per-harness setting, in the table's order). An older daemon says a limit under the
 * name its stored bindings had, or not at all (one older than max_concurrency).
 */
export function limitsText(limits: HarnessLimits | undefined): string {
  if (limits === undefined) return '-';
  const said = limits as unknown as Record<string, number | undefined>;
  const parts: string[] = [];
  for (const row of HARNESS_SETTINGS) {
    const value = said[row.harness.wire] ?? ('legacy' in row.harness ? said[row.harness.legacy] : undefined);
    if (value !== undefined)
      parts.push(row.kind === 'duration' ? formatDuration(value) : row.kind === 'size' ? formatSize(value) : String(value));
  }
  return parts.join('/');
}

/** `berm.http.fetch=api.example.com secret=example`, in the grant syntax of `crab deploy --grant`. */
export function grantsText(grants: GrantSet | undefined): string {
  if (grants === undefined) return '-';
  const parts = Object.entries(grants.syscalls).map(([syscall, hosts]) =>
    hosts.length > 0 ? `${syscall}=${hosts.join(',')}` : `syscall=${syscall}`,
  );
  if (grants.secrets.length > 0) parts.push(`secret=${grants.secrets.join(',')}`);
  return parts.length > 0 ? parts.join(' ') : '-';
}
