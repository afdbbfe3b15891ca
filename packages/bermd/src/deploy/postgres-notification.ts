/**
 * What travels on the store's channel. For a harness, `{"name": NAME, "what": "harness" | "usage"}`:
 * which harness and whether its row or its uses changed, never the data. For a 2025-era MCP session,
 * `{"key": KEY, "what": "session"}` (its row changed or is gone) or `{"key": KEY, "what": "cancel",
 * "ids": [...]}` (its client cancelled requests, which may be running on another replica); `KEY` is the
 * digest of the session id its row is stored by, never the id. Any role that can connect may `NOTIFY`
 * on the channel without a right on bermd's tables, so a receiver reads what changed from the tables
 * (the source of truth) and takes nothing from a payload but a name or key, a kind of change, and the
 * request ids of a cancel, which only ever stop calls of a session the receiver holds.
 */
import { isHarnessName } from '@berm/protocol';

export type StoreChange = 'harness' | 'usage';

export interface StoreNotification {
  name: string;
  what: StoreChange;
}

export type SessionNotification = { key: string; what: 'session' } | { key: string; what: 'cancel'; ids: Array<string | number> };

/**
 * `{"name": NAME, "what": "resource", "path": PATH}`: a harness's resource changed. The receiver serves
 * it only as far as the deployed harness declares that path, so a forged one tells nothing new.
 */
export interface ResourceNotification {
  name: string;
  what: 'resource';
  path: string;
}

export function encodeResourceNotification(name: string, path: string): string {
  return JSON.stringify({ name, what: 'resource', path });
}

/** The harness and path a resource notification names; null for anything else. */
export function decodeResourceNotification(text: string | undefined): ResourceNotification | null {
  const { name, what, path } = parse(text);
  if (what !== 'resource' || typeof name !== 'string' || !isHarnessName(name) || typeof path !== 'string') return null;
  return { name, what, path };
}

/** A session key: a SHA-256 digest in base64url. */
const SESSION_KEY = /^[A-Za-z0-9_-]{43}$/;

/** PostgreSQL refuses a payload of 8000 bytes or more; a cancel longer than this is not sent. */
export const MAX_PAYLOAD = 7900;

export function encodeNotification(name: string, what: StoreChange): string {
  return JSON.stringify({ name, what });
}

export function encodeSessionNotification(notification: SessionNotification): string {
  return JSON.stringify(notification);
}

function parse(text: string | undefined): Record<string, unknown> {
  try {
    const message: unknown = JSON.parse(text ?? '');
    return typeof message === 'object' && message !== null && !Array.isArray(message) ? (message as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The harness and the change `text` names; null for anything else (not JSON, a name outside the rule, another change). */
export function decodeNotification(text: string | undefined): StoreNotification | null {
  const { name, what } = parse(text);
  if (typeof name !== 'string' || !isHarnessName(name)) return null;
  return what === 'harness' || what === 'usage' ? { name, what } : null;
}

/** The session and the change `text` names; null for anything else. */
export function decodeSessionNotification(text: string | undefined): SessionNotification | null {
  const { key, what, ids } = parse(text);
  if (typeof key !== 'string' || !SESSION_KEY.test(key)) return null;
  if (what === 'session') return { key, what };
  if (what !== 'cancel' || !Array.isArray(ids)) return null;
  const kept = ids.filter((id): id is string | number => typeof id === 'string' || typeof id === 'number');
  return { key, what, ids: kept };
}
