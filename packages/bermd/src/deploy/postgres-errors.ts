/**
 * What a failure of the database means to bermd: out of reach now (`store-unavailable`, 503, worth
 * retrying) or a refusal of what was asked (a wrong password, a constraint), which is itself. Said in
 * words that hold no connection parameter: node-postgres' errors can carry the client, whose
 * parameters hold the password.
 */
import { ApiError } from '@berm/protocol';
import { BermdError } from '../errors.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** SQLSTATEs of a server going away or not taking connections yet (class 08 is every connection exception). */
const SERVER_GONE = new Set(['57P01', '57P02', '57P03', '53300']);
const GONE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Client was closed|connection is closed/i;

/** Whether `e` says the database cannot be reached now (as opposed to refusing what was asked). */
export function isUnreachable(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_GONE.has(code) || code.startsWith('08'))) return true;
  return e instanceof Error && GONE_MESSAGE.test(e.message);
}

/** What went wrong, in words that hold no connection parameter: the code and the message only. */
export function reasonOf(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

/** What a failure is answered as: the database out of reach is `store-unavailable`; a refusal of the work is itself. */
export function storeFailure(e: unknown, location: string): unknown {
  if (e instanceof ApiError || !isUnreachable(e)) return e;
  return new BermdError('store-unavailable', `the store ${location} cannot be reached: ${reasonOf(e)}`, { store: location });
}
