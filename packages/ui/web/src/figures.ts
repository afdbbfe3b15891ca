/**
 * The live figures a view shows, read again whenever `GET /figures/events` names what it shows (and on
 * every reconnection, after which anything may have moved). The stream is opened by the view that needs
 * it and closed when it goes, so a page showing no figures follows none.
 */
import { useEffect, useState } from 'preact/hooks';
import { figuresSummary, harnessFigures, isUnauthorized } from './api.js';
import { authHeaders } from './credentials.js';
import { usePage } from './context.js';
import { readSse } from './sse.js';
import type { FiguresChange, FiguresSummary, HarnessFigures } from './types.js';

/** Waits after a lost stream before trying again, growing to this much. */
const MAX_RETRY_MS = 10_000;

/** Calls `onMoved` with the harnesses whose figures moved, and with undefined once the stream is (re)opened. */
function followFigures(onMoved: (harnesses: string[] | undefined) => void): () => void {
  const abort = new AbortController();
  let retryMs = 500;
  const run = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        const response = await fetch('/figures/events', {
          headers: { accept: 'text/event-stream', ...authHeaders() },
          signal: abort.signal,
        });
        // A refusal (signed out, no berm:read, at the cap) is the list's to tell: the figures just stay as read.
        if (response.status === 401 || response.status === 403) return;
        if (response.ok && response.body !== null) {
          retryMs = 500;
          onMoved(undefined);
          for await (const message of readSse(response.body)) onMoved((JSON.parse(message.data) as FiguresChange).harnesses);
        }
      } catch {
        // the daemon went away or the view is leaving; retried below unless aborted
      }
      if (abort.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, retryMs));
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    }
  };
  void run();
  return () => abort.abort();
}

export type Figures<T> = { state: 'loading' } | { state: 'ready'; figures: T } | { state: 'error'; error: unknown };

/** Reads with `read` now, and again whenever the stream names a harness `concerns` accepts. */
function useLive<T>(read: (() => Promise<T>) | undefined, concerns: (harnesses: string[]) => boolean, key: string): Figures<T> {
  const { unauthorized } = usePage();
  const [figures, setFigures] = useState<Figures<T>>({ state: 'loading' });
  useEffect(() => {
    if (read === undefined) return undefined;
    let current = true;
    // One read at a time; a change during a read asks for one more after it.
    let reading = false;
    let again = false;
    const fetchNow = (): void => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      read()
        .then(
          (value) => current && setFigures({ state: 'ready', figures: value }),
          (error: unknown) => {
            if (!current) return;
            if (isUnauthorized(error)) unauthorized();
            setFigures({ state: 'error', error });
          },
        )
        .finally(() => {
          reading = false;
          if (again && current) {
            again = false;
            fetchNow();
          }
        });
    };
    fetchNow();
    const stop = followFigures((moved) => {
      if (moved === undefined || concerns(moved)) fetchNow();
    });
    return () => {
      current = false;
      stop();
    };
  }, [key]);
  return figures;
}

/** `name`'s figures; `generation` moves when it is replaced (its tools may be others). */
export function useHarnessFigures(name: string, generation: number): Figures<HarnessFigures> {
  return useLive(
    () => harnessFigures(name),
    (moved) => moved.includes(name),
    `${name}\u0000${generation}`,
  );
}

/**
 * Every harness's hour; `generation` moves with each deploy and undeploy (the list's harnesses change).
 * Nothing is read unless `enabled` (a principal without `berm:read` would be refused).
 */
export function useFiguresSummary(generation: number, enabled: boolean): Figures<FiguresSummary> {
  return useLive(enabled ? () => figuresSummary() : undefined, () => true, `${enabled}\u0000${generation}`);
}
