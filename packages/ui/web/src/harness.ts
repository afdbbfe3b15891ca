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

export function useHarness(name: string): Loaded {
  const { change, unauthorized } = usePage();
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const concerned = change.message === undefined || change.message.name === name;
  const generation = concerned ? change.seq : -1;
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
