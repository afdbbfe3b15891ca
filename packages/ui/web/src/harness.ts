/** One harness's detail, fetched when a view opens it and again whenever that name changes. */
import { useEffect, useState } from 'preact/hooks';
import { getHarness, isUnauthorized } from './api.js';
import { usePage } from './context.js';
import type { HarnessDetail } from './types.js';

export type Loaded =
  | { state: 'loading' }
  | { state: 'ready'; harness: HarnessDetail }
  | { state: 'gone' }
  | { state: 'error'; error: unknown };

/**
 * A number that moves whenever `name` may have changed (a change of it, or a reconnection, after
 * which anything may have), and is -1 after a change of another name: what an effect that fetches
 * something of `name` depends on, skipping -1.
 */
export function useChangeOf(name: string): number {
  const { change } = usePage();
  const concerned = change.message === undefined || change.message.name === name;
  return concerned ? change.seq : -1;
}

export function useHarness(name: string): Loaded {
  const { unauthorized } = usePage();
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const generation = useChangeOf(name);
  useEffect(() => {
    if (generation < 0) return;
    let current = true;
    getHarness(name).then(
      (harness) => current && setLoaded({ state: 'ready', harness }),
      (error: unknown) => {
        if (!current) return;
        if (isUnauthorized(error)) unauthorized();
        setLoaded((error as { status?: number }).status === 404 ? { state: 'gone' } : { state: 'error', error });
      },
    );
    return () => {
      current = false;
    };
  }, [name, generation]);
  return loaded;
}
