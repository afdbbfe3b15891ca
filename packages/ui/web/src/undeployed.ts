/** The names undeployed lately (`GET /undeployed`), fetched again on every change of the deployed set. */
import { useEffect, useState } from 'preact/hooks';
import { isUnauthorized, listUndeployed } from './api.js';
import { usePage } from './context.js';
import type { UndeployedHarness } from './types.js';

export type UndeployedList = { state: 'loading' } | { state: 'ready'; harnesses: UndeployedHarness[] } | { state: 'error'; error: unknown };

/** Asks nothing while `enabled` is false (a principal without `berm:read`, whom bermd would refuse). */
export function useUndeployed(enabled = true): UndeployedList {
  const { change, unauthorized } = usePage();
  const [list, setList] = useState<UndeployedList>({ state: 'loading' });
  useEffect(() => {
    if (!enabled) return;
    let current = true;
    listUndeployed().then(
      (harnesses) => current && setList({ state: 'ready', harnesses }),
      (error: unknown) => {
        if (!current) return;
        if (isUnauthorized(error)) unauthorized();
        setList({ state: 'error', error });
      },
    );
    return () => {
      current = false;
    };
  }, [enabled, change.seq]);
  return list;
}
