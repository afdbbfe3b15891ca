/**
 * The keep-alive of every Server-Sent Events stream bermd serves: `GET /events`, and `/mcp`'s (a 2025
 * session's stream and a call's answer, a 2026-07-28 listen or streamed call). A quiet stream is closed
 * by proxies and idle timers between bermd and its client; a comment line at an interval, which every
 * SSE reader skips, keeps it open. One interval and one comment for all of them: the MCP SDK's own
 * (its transports are handed the same interval, so the streams it writes say it alike).
 */
import type { ServerResponse } from 'node:http';

/** The SDK's default interval (its `DEFAULT_SSE_KEEP_ALIVE_MS`, which it does not export). */
export const SSE_KEEP_ALIVE_MS = 15_000;

/** The comment the SDK's transports write. */
export const KEEP_ALIVE_COMMENT = ': keepalive\n\n';

/**
 * Writes the comment on `res`, whose headers are sent, every `intervalMs` until the timer answered is
 * cleared (the stream's end clears it); no timer for an interval of 0. The timer never keeps the process
 * alive by itself.
 */
export function keepAlive(res: ServerResponse, intervalMs: number = SSE_KEEP_ALIVE_MS): NodeJS.Timeout | undefined {
  if (!(intervalMs > 0)) return undefined;
  const timer = setInterval(() => {
    if (!res.destroyed) res.write(KEEP_ALIVE_COMMENT);
  }, intervalMs);
  timer.unref();
  return timer;
}
