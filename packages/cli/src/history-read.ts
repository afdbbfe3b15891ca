/**
 * Reading a harness's deploy history from bermd for `berm history`: one page, or every page by following
 * `next_cursor` to the end, and what an empty history means.
 */
import { isBermClientError, type BermClient, type HistoryEntry } from '@berm/client';
import { CliError } from './failure.js';

export interface HistoryRead {
  /** Newest first, as bermd answers them. */
  entries: HistoryEntry[];
  /** Whether bermd holds older entries than these (only when not every page was read). */
  more: boolean;
}

/** `limit` entries per page (bermd's page when absent); with `all`, every page there is. */
export async function readHistory(client: BermClient, name: string, options: { limit?: number; all: boolean }): Promise<HistoryRead> {
  const entries: HistoryEntry[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (;;) {
    const page = await client.history(name, { cursor, limit: options.limit });
    entries.push(...page.entries);
    if (page.next_cursor === null) return { entries, more: false };
    if (!options.all) return { entries, more: true };
    // A cursor answered twice would page forever: what answers is not reading its history forward.
    if (seen.has(page.next_cursor))
      throw new CliError(
        'unexpected-response',
        `bermd at ${client.url} gave the same history cursor for ${name} twice; the export stopped`,
        {
          name,
          url: client.url,
        },
      );
    seen.add(page.next_cursor);
    cursor = page.next_cursor;
  }
}

/**
 * What an empty history means, as `helm history` and `kubectl rollout history` treat a name they do not
 * know: an error (`not-found`), unless the name is deployed, which it can be with no entry when it was
 * deployed before bermd kept history. Answers the line to print in that case.
 */
export async function explainNoHistory(client: BermClient, name: string): Promise<string> {
  try {
    await client.get(name);
  } catch (e) {
    if (isBermClientError(e) && e.code === 'not-found')
      throw new CliError(
        'not-found',
        `no history of ${name} at ${client.url}: no harness of that name was deployed there, or its undeploy is older than bermd's --history-retention`,
        { name, url: client.url, status: 404 },
      );
    throw e;
  }
  return `${name} has no history at ${client.url}: it was deployed before bermd kept one`;
}
