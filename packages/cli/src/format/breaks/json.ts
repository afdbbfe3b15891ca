import type { Break } from '@berm/manifest';

/** The break objects as a JSON array, what `--json` prints too. */
export function formatBreaksJson(breaks: readonly Break[]): string {
  return JSON.stringify(breaks, null, 2);
}
