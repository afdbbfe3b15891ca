/**
 * What travels on the store's channel: `{"name": NAME, "what": "harness" | "usage"}`, which harness and
 * whether its row or its uses changed, never the data. Any role that can connect may `NOTIFY` on the
 * channel without a right on bermd's tables, so a receiver reads what changed from the tables (the
 * source of truth) and takes nothing from a payload but a harness's name and a kind of change.
 */
import { isHarnessName } from '@berm/protocol';

export type StoreChange = 'harness' | 'usage';

export interface StoreNotification {
  name: string;
  what: StoreChange;
}

export function encodeNotification(name: string, what: StoreChange): string {
  return JSON.stringify({ name, what });
}

/** The harness and the change `text` names; null for anything else (not JSON, a name outside the rule, another change). */
export function decodeNotification(text: string | undefined): StoreNotification | null {
  let message: unknown;
  try {
    message = JSON.parse(text ?? '');
  } catch {
    return null;
  }
  const { name, what } = (typeof message === 'object' && message !== null ? message : {}) as { name?: unknown; what?: unknown };
  if (typeof name !== 'string' || !isHarnessName(name)) return null;
  return what === 'harness' || what === 'usage' ? { name, what } : null;
}
