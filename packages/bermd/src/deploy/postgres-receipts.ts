/**
 * Receipts in PostgreSQL (`berm_receipt`, schema 7), shared by the replicas: `begin` is an
 * `INSERT ... ON CONFLICT DO NOTHING`, so of two replicas given the same key at once exactly one writes
 * the row and runs the call; the other reads the row it lost to. `takeOver` and `complete` update only a
 * row still held by the attempt they name. Times are the database's clock (`now()`), which every replica
 * reads alike, save `prune` given a time (a test's clock).
 */
import type { Query } from './postgres-rows.js';
import { DEFAULT_RECEIPT_RETENTION_MS, type Receipt, type ReceiptId, type ReceiptQuery, type ReceiptStore } from './receipts.js';

interface ReceiptRow {
  principal: string;
  harness: string;
  tool: string;
  key: string;
  args_sha256: string;
  state: 'started' | 'completed';
  started_at: Date;
  replica: string;
  attempt: string;
  generated: boolean;
  completed_at: Date | null;
  outcome: Receipt['outcome'];
  code: string | null;
  answer: unknown;
  answer_kept: boolean;
}

const COLUMNS =
  'principal, harness, tool, key, args_sha256, state, started_at, replica, attempt, generated, completed_at, outcome, code, answer, answer_kept';
const ID = 'harness = $1 AND principal = $2 AND tool = $3 AND key = $4';

function receiptOf(row: ReceiptRow): Receipt {
  return {
    principal: row.principal,
    harness: row.harness,
    tool: row.tool,
    key: row.key,
    args_sha256: row.args_sha256,
    state: row.state,
    started_at: row.started_at.toISOString(),
    replica: row.replica,
    attempt: row.attempt,
    generated: row.generated,
    completed_at: row.completed_at === null ? null : row.completed_at.toISOString(),
    outcome: row.outcome,
    code: row.code,
    answer: row.answer,
    answer_kept: row.answer_kept,
  };
}

function idParams(id: ReceiptId): string[] {
  return [id.harness, id.principal, id.tool, id.key];
}

export class PostgresReceipts implements ReceiptStore {
  constructor(
    private readonly query: Query,
    private readonly retentionMs = DEFAULT_RECEIPT_RETENTION_MS,
  ) {}

  async begin(r: Receipt): Promise<Receipt | null> {
    const { rowCount } = await this.query(
      `INSERT INTO berm_receipt (principal, harness, tool, key, args_sha256, state, started_at, replica, attempt, generated, answer_kept)
       VALUES ($2, $1, $3, $4, $5, 'started', $6, $7, $8, $9, true) ON CONFLICT DO NOTHING`,
      [...idParams(r), r.args_sha256, r.started_at, r.replica, r.attempt, r.generated],
    );
    if (rowCount === 1) return null;
    // Lost to another: it is there (a prune between the two statements would make it a new call's, run again).
    return (await this.read(r)) ?? (await this.begin(r));
  }

  async takeOver(previous: string, r: Receipt): Promise<boolean> {
    const { rowCount } = await this.query(
      `UPDATE berm_receipt SET args_sha256 = $5, state = 'started', started_at = $6, replica = $7, attempt = $8,
         completed_at = NULL, outcome = NULL, code = NULL, answer = NULL, answer_kept = true
       WHERE ${ID} AND attempt = $9`,
      [...idParams(r), r.args_sha256, r.started_at, r.replica, r.attempt, previous],
    );
    return rowCount === 1;
  }

  async complete(r: Receipt): Promise<boolean> {
    const { rowCount } = await this.query(
      `UPDATE berm_receipt SET state = 'completed', completed_at = $6, outcome = $7, code = $8, answer = $9, answer_kept = $10
       WHERE ${ID} AND attempt = $5`,
      [...idParams(r), r.attempt, r.completed_at, r.outcome, r.code, r.answer === null ? null : JSON.stringify(r.answer), r.answer_kept],
    );
    return rowCount === 1;
  }

  async forget(id: ReceiptId, attempt: string): Promise<void> {
    await this.query(`DELETE FROM berm_receipt WHERE ${ID} AND attempt = $5`, [...idParams(id), attempt]);
  }

  async read(id: ReceiptId): Promise<Receipt | null> {
    const { rows } = await this.query<ReceiptRow>(`SELECT ${COLUMNS} FROM berm_receipt WHERE ${ID}`, idParams(id));
    return rows[0] === undefined ? null : receiptOf(rows[0]);
  }

  async list(harness: string, query: ReceiptQuery = {}): Promise<Receipt[]> {
    const { rows } = await this.query<ReceiptRow>(
      `SELECT ${COLUMNS} FROM berm_receipt WHERE harness = $1 AND ($2::text IS NULL OR key = $2)
       ORDER BY started_at DESC LIMIT $3`,
      [harness, query.key ?? null, query.limit ?? null],
    );
    return rows.map(receiptOf);
  }

  async prune(now?: Date): Promise<number> {
    const { rowCount } = await this.query(
      `DELETE FROM berm_receipt WHERE started_at < COALESCE($1::timestamptz, now()) - $2 * interval '1 millisecond'`,
      [now?.toISOString() ?? null, this.retentionMs],
    );
    return rowCount ?? 0;
  }

  async ageOf(receipt: Receipt): Promise<number> {
    const { rows } = await this.query<{ age: number }>('SELECT (EXTRACT(EPOCH FROM now() - $1::timestamptz) * 1000)::float8 AS age', [
      receipt.started_at,
    ]);
    return rows[0]!.age;
  }
}
