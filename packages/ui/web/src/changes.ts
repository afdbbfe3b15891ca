/**
 * Follows `GET /events`, bermd's stream of deploys and undeploys. On every (re)connection the
 * caller is told `live` once the stream is open, and lists the harnesses then: a change before
 * that is in the list, a change after it arrives as an event.
 */
import { readSse } from './sse.js';
import { authHeaders } from './credentials.js';
import type { HarnessChange } from './types.js';

export type StreamState = 'connecting' | 'live' | 'offline' | 'unauthorized';

/** Waits after a lost stream before trying again, growing to this much. */
const MAX_RETRY_MS = 10_000;

export function followChanges(onChange: (message: HarnessChange) => void, onState: (state: StreamState) => void): () => void {
  const abort = new AbortController();
  let retryMs = 500;
  const run = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      onState('connecting');
      try {
        const response = await fetch('/events', { headers: { accept: 'text/event-stream', ...authHeaders() }, signal: abort.signal });
        if (response.status === 401) {
          onState('unauthorized');
          return;
        }
        if (response.ok && response.body !== null) {
          retryMs = 500;
          onState('live');
          for await (const message of readSse(response.body)) onChange(JSON.parse(message.data) as HarnessChange);
        }
      } catch {
        // the daemon went away or the page is leaving; retried below unless aborted
      }
      if (abort.signal.aborted) return;
      onState('offline');
      await new Promise((resolve) => setTimeout(resolve, retryMs));
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    }
  };
  void run();
  return () => abort.abort();
}
