/**
 * Receipts: what a store keeps of each call of an `external_write` tool, one per (principal, harness,
 * tool, idempotency key), so that a retried call with the same key is answered from it rather than run
 * again (mcp/receipts.ts decides). A receipt is written `started` before the guest runs and completed with
 * the outcome once it answers; an attempt is named by `attempt`, so only the attempt that holds a receipt
 * completes it, and an abandoned one is taken over by exactly one retry (`takeOver` compares it).
 *
 * The directory store keeps a file per receipt (directory-receipts.ts); the PostgreSQL store a table the
 * replicas share, whose unique key decides which of two replicas runs a call (postgres-receipts.ts). Both
 * forget receipts older than `--receipt-retention` at `prune`, by the clock they are given.
 */
import { createHash } from 'node:crypto';
import type { ReceiptView } from '@berm/protocol';

/** Which call a receipt is for. */
export interface ReceiptId {
  /** The principal's name; empty for a call of bermd's own. */
  principal: string;
  harness: string;
  tool: string;
  key: string;
}

/** How a completed call ended: it answered, it answered an error (the tool's own), or the host stopped it. */
export type ReceiptOutcome = 'ok' | 'tool-error' | 'failed';

export interface Receipt extends ReceiptId {
  /** The hex SHA-256 of the arguments as canonical JSON (object members sorted). */
  args_sha256: string;
  state: 'started' | 'completed';
  /** When the attempt holding it started (ISO 8601). */
  started_at: string;
  /** The replica that runs (or ran) it: `--replica-name`. */
  replica: string;
  /** Unique to the attempt holding it. */
  attempt: string;
  /** bermd made the key (the client sent none): no other call can carry it. */
  generated: boolean;
  completed_at: string | null;
  outcome: ReceiptOutcome | null;
  /** The error's code for `tool-error` and `failed`. */
  code: string | null;
  /** The answer as first given (an MCP tool result), when it was within the harness's result limit; else null. */
  answer: unknown;
  /** False when the answer was over the result limit, and only the outcome is kept. */
  answer_kept: boolean;
}

export interface ReceiptQuery {
  key?: string;
  /** At most this many, newest first. */
  limit?: number;
}

export interface ReceiptStore {
  /** Writes `receipt` (started) unless one with its id is there: null when written, else the one that is. */
  begin(receipt: Receipt): Promise<Receipt | null>;
  /** Writes `next` in place of the receipt of the same id, only while that one is still held by `previous` (abandoned); false when another took it. */
  takeOver(previous: string, next: Receipt): Promise<boolean>;
  /** Writes the completed receipt, only while it is still held by its attempt; false when another took it over. */
  complete(receipt: Receipt): Promise<boolean>;
  /** Removes the attempt's receipt: its call was refused before anything ran. */
  forget(id: ReceiptId, attempt: string): Promise<void>;
  read(id: ReceiptId): Promise<Receipt | null>;
  /** The receipts of `harness`, newest first. */
  list(harness: string, query?: ReceiptQuery): Promise<Receipt[]>;
  /** Forgets receipts started before `now` less the retention; answers how many. */
  prune(now?: Date): Promise<number>;
  /** The age, in ms, of a receipt's attempt as the store's clock tells it (the database's for a shared store). */
  ageOf(receipt: Receipt): Promise<number>;
}

/** How long receipts are kept when no retention is given: a day. */
export const DEFAULT_RECEIPT_RETENTION_MS = 24 * 60 * 60 * 1000;

/** The same string for equal JSON values, object members in any order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The hex SHA-256 of `args` as canonical JSON: what a receipt compares a retry's arguments by. */
export function argumentsHash(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex');
}

/** The id of `receipt`, alone. */
export function idOf(receipt: ReceiptId): ReceiptId {
  return { principal: receipt.principal, harness: receipt.harness, tool: receipt.tool, key: receipt.key };
}

/** The most receipts `GET /harnesses/{name}/receipts` answers at once, and how many unless asked. */
export const MAX_RECEIPTS_PAGE = 1000;
export const RECEIPTS_PAGE = 100;

/** `receipt` as the control API shows it: without the attempt (bermd's own), with its answer only when `bodies`. */
export function receiptView(receipt: Receipt, bodies: boolean): ReceiptView {
  const view: ReceiptView = {
    principal: receipt.principal,
    tool: receipt.tool,
    key: receipt.key,
    generated: receipt.generated,
    args_sha256: receipt.args_sha256,
    state: receipt.state,
    outcome: receipt.outcome,
    code: receipt.code,
    started_at: receipt.started_at,
    completed_at: receipt.completed_at,
    replica: receipt.replica,
    answer_kept: receipt.answer_kept,
  };
  if (bodies) view.answer = receipt.answer;
  return view;
}
