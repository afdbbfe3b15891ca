/**
 * What a call of an `external_write` tool passes before and after it runs (docs/contract.md §6): its
 * idempotency key (the client's `_meta["io.berm/idempotency-key"]`, else one made for it), its receipt
 * written `started` before the guest runs and completed with the answer, and what a second call with the
 * same key gets instead of running: the recorded answer (marked `io.berm/replayed`), a refusal for other
 * arguments, a wait for the first still running, or, when the first was abandoned, what the tool's retry
 * mode says.
 *
 * Abandoned: a `started` receipt whose attempt cannot be running any more. An attempt runs at most its
 * harness's time limit (the runtime stops it there), so one older than that is over, whatever replica held
 * it; so is one of this process that it no longer runs, and, on a store one process keeps (a directory),
 * any attempt not of this process (a bermd stopped in the middle). A completed receipt whose call the host
 * stopped (`failed`: a timeout, a worker lost) is as uncertain, and is retried the same way.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { IDEMPOTENCY_KEY_META, REPLAYED_META } from '@berm/protocol';
import { argumentsHash, idOf, type Receipt, type ReceiptId, type ReceiptOutcome, type ReceiptStore } from '../deploy/index.js';
import type { CallOutcome } from '../runtime/index.js';

export { IDEMPOTENCY_KEY_META, REPLAYED_META };

/** How often a call waiting on an attempt another replica runs reads its receipt again. */
const POLL_MS = 50;

/** The codes of a call refused before anything ran: its receipt is forgotten, and a retry runs as new. */
const NOTHING_RAN: ReadonlySet<string> = new Set(['unknown-harness', 'unknown-tool', 'insufficient-scope', 'invalid-arguments', 'busy']);
/** The codes of a call the host stopped: it may have written or not. */
const STOPPED: ReadonlySet<string> = new Set(['timeout', 'cancelled', 'memory-limit', 'closed', 'internal']);

export type RetryMode = 'idempotency_key' | 'reconcile' | 'none';

/** One call of an external write, as `callTool` hands it over. */
export interface WriteCall {
  principal: string;
  harness: string;
  tool: string;
  /** The tool's name as served (`shop.place`), for messages. */
  name: string;
  retry: RetryMode;
  args: unknown;
  /** The request's `_meta`. */
  meta: unknown;
  /** The harness's time limit and result limit. */
  limits: { callTimeoutMs: number; maxResultBytes: number };
  /** Runs the tool with `key`: its answer, and its error's code when it failed. */
  run(key: string): Promise<{ result: CallToolResult; code?: string }>;
  /** Calls the reconcile tool with the write's arguments and `key`; undefined when the tool has none. */
  reconcile?: (key: string) => Promise<CallOutcome>;
  /** The write's answer for an ok value (what a reconcile that found the write done records). */
  render(outcome: CallOutcome): CallToolResult;
}

export interface ReceiptsOptions {
  store: ReceiptStore;
  /** This process's `--replica-name`, recorded in each receipt. */
  replica: string;
  /** Whether other processes share the store (a database): an attempt not of this process may still run there. */
  shared: boolean;
  /** The longest key a client may send, in UTF-8 bytes (`--max-idempotency-key`). */
  maxKeyBytes: number;
  logger: Logger;
}

function refusal(code: string, message: string, key?: string): CallToolResult {
  const meta: Record<string, unknown> = { 'berm/error': { code } };
  if (key !== undefined) meta[IDEMPOTENCY_KEY_META] = key;
  return { content: [{ type: 'text', text: message }], isError: true, _meta: meta };
}

/** `result` with `extra` added to its `_meta`. */
function withMeta(result: CallToolResult, extra: Record<string, unknown>): CallToolResult {
  return { ...result, _meta: { ...(result._meta ?? {}), ...extra } };
}

function idKey(id: ReceiptId): string {
  return JSON.stringify([id.principal, id.harness, id.tool, id.key]);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class Receipts {
  /** Unique to this process: every attempt it makes is named after it. */
  private readonly process = randomUUID();
  /** Attempts this process runs, by receipt id: a second call with the key waits on the first here. */
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly options: ReceiptsOptions) {}

  /** The call's answer: run under a receipt, replayed from one, or refused. */
  async call(call: WriteCall): Promise<CallToolResult> {
    const given = (call.meta as Record<string, unknown> | undefined)?.[IDEMPOTENCY_KEY_META];
    if (given !== undefined) {
      const bytes = typeof given === 'string' ? Buffer.byteLength(given) : -1;
      if (bytes < 1 || bytes > this.options.maxKeyBytes)
        return refusal(
          'bad-idempotency-key',
          `_meta["${IDEMPOTENCY_KEY_META}"] of a call to ${call.name} must be a string of 1 to ${this.options.maxKeyBytes} bytes (--max-idempotency-key)` +
            `${typeof given === 'string' ? `, not ${bytes}` : `, not ${given === null ? 'null' : typeof given}`}; nothing ran`,
        );
    }
    const key = typeof given === 'string' ? given : randomUUID();
    const receipt = this.fresh(call, key, given === undefined);
    const deadline = performance.now() + call.limits.callTimeoutMs;
    for (;;) {
      let found: Receipt | null;
      try {
        found = await this.options.store.begin(receipt);
      } catch (e) {
        return this.storeFailed(call, key, e);
      }
      if (found === null) return this.execute(call, receipt);
      if (found.args_sha256 !== receipt.args_sha256)
        return refusal(
          'idempotency-key-reused',
          `the idempotency key ${JSON.stringify(key)} was used for a call to ${call.name} with other arguments (started ${found.started_at}); ` +
            'a new call needs a new key: nothing ran',
          key,
        );
      if (found.state === 'completed' && found.outcome !== 'failed') return this.replay(call, found);
      const local = this.running.get(idKey(found));
      if (found.state === 'started' && local !== undefined) {
        // Running here: its end (or this call's time) is what is waited on.
        const left = deadline - performance.now();
        if (left <= 0) return this.inProgress(call, found);
        await Promise.race([local, sleep(left)]);
        continue;
      }
      let abandoned: boolean;
      try {
        abandoned = found.state === 'completed' || (await this.abandoned(found, call.limits.callTimeoutMs));
      } catch (e) {
        return this.storeFailed(call, key, e);
      }
      if (abandoned) {
        const answer = await this.retry(call, found, key);
        if (answer !== undefined) return answer;
        continue;
      }
      if (performance.now() + POLL_MS > deadline) return this.inProgress(call, found);
      await sleep(POLL_MS);
    }
  }

  /** A new attempt's receipt. */
  private fresh(call: WriteCall, key: string, generated: boolean): Receipt {
    return {
      principal: call.principal,
      harness: call.harness,
      tool: call.tool,
      key,
      args_sha256: argumentsHash(call.args ?? {}),
      state: 'started',
      started_at: new Date().toISOString(),
      replica: this.options.replica,
      attempt: `${this.process}/${randomUUID()}`,
      generated,
      completed_at: null,
      outcome: null,
      code: null,
      answer: null,
      answer_kept: true,
    };
  }

  /** Whether a started attempt this process does not run can no longer be running anywhere. */
  private async abandoned(found: Receipt, callTimeoutMs: number): Promise<boolean> {
    if (found.attempt.startsWith(`${this.process}/`) || !this.options.shared) return true;
    return (await this.options.store.ageOf(found)) > callTimeoutMs;
  }

  /** What the retry mode makes of an abandoned attempt; undefined when another call took it over first (read it again). */
  private async retry(call: WriteCall, found: Receipt, key: string): Promise<CallToolResult | undefined> {
    if (call.retry === 'none')
      return refusal(
        'outcome-unknown',
        `${call.name} was called with the idempotency key ${JSON.stringify(key)} at ${found.started_at} (on ${found.replica}) and never finished` +
          `${found.code === null ? '' : ` (${found.code})`}; its retry mode is none, so it may have written: nothing ran. ` +
          'Find out whether it did, then call again with a new key if it did not',
        key,
      );
    const next = { ...this.fresh(call, key, found.generated), started_at: new Date().toISOString() };
    let taken: boolean;
    try {
      taken = await this.options.store.takeOver(found.attempt, next);
    } catch (e) {
      return this.storeFailed(call, key, e);
    }
    if (!taken) return undefined;
    if (call.retry === 'reconcile' && call.reconcile !== undefined) return this.reconcile(call, next);
    return this.execute(call, next);
  }

  /** Asks the reconcile tool whether the abandoned write happened: done records its result, not done runs the write again. */
  private async reconcile(call: WriteCall, receipt: Receipt): Promise<CallToolResult> {
    const done = this.track(receipt);
    try {
      const outcome = await call.reconcile!(receipt.key);
      const answer = 'ok' in outcome ? outcome.ok : undefined;
      if (typeof answer === 'object' && answer !== null && typeof (answer as { done?: unknown }).done === 'boolean') {
        const { done: happened, result } = answer as { done: boolean; result?: unknown };
        if (!happened) {
          done.finish();
          return this.execute(call, receipt);
        }
        const recorded = call.render({ ok: result ?? null, reached: outcome.reached });
        return await this.settle(call, receipt, recorded, recorded.isError === true ? 'bad-result' : undefined);
      }
      const why =
        'error' in outcome ? `${outcome.error.code}: ${outcome.error.message}` : 'it did not answer {"done": boolean, "result"?: ...}';
      const failed = refusal(
        'outcome-unknown',
        `${call.name} with the idempotency key ${JSON.stringify(receipt.key)} never finished, and its reconcile tool could not tell whether it wrote (${why}): nothing ran`,
        receipt.key,
      );
      await this.record(receipt, 'failed', 'error' in outcome ? outcome.error.code : 'bad-result', null, true);
      return failed;
    } finally {
      done.finish();
    }
  }

  /** Runs the write under `receipt`, which this attempt holds, and completes it. */
  private async execute(call: WriteCall, receipt: Receipt): Promise<CallToolResult> {
    const done = this.track(receipt);
    try {
      const { result, code } = await call.run(receipt.key);
      if (code !== undefined && NOTHING_RAN.has(code)) {
        await this.options.store.forget(idOf(receipt), receipt.attempt).catch((e: unknown) => this.warn(receipt, e, 'forget'));
        return withMeta(result, { [IDEMPOTENCY_KEY_META]: receipt.key });
      }
      return await this.settle(call, receipt, result, code);
    } finally {
      done.finish();
    }
  }

  /** Completes `receipt` with `result`; answers it, naming its key. */
  private async settle(call: WriteCall, receipt: Receipt, result: CallToolResult, code: string | undefined): Promise<CallToolResult> {
    const answer = withMeta(result, { [IDEMPOTENCY_KEY_META]: receipt.key });
    // Any other error is the tool's answer (its own error, a result too long or not allowed): replayed as given.
    const outcome: ReceiptOutcome = code === undefined ? 'ok' : STOPPED.has(code) ? 'failed' : 'tool-error';
    const kept = Buffer.byteLength(JSON.stringify(answer)) <= call.limits.maxResultBytes;
    await this.record(receipt, outcome, code ?? null, kept ? answer : null, kept);
    return answer;
  }

  private async record(receipt: Receipt, outcome: ReceiptOutcome, code: string | null, answer: unknown, kept: boolean): Promise<void> {
    const completed: Receipt = {
      ...receipt,
      state: 'completed',
      completed_at: new Date().toISOString(),
      outcome,
      code,
      answer,
      answer_kept: kept,
    };
    try {
      if (!(await this.options.store.complete(completed)))
        this.options.logger.warn({ harness: receipt.harness, tool: receipt.tool }, 'a receipt was taken over before its call finished');
    } catch (e) {
      // Left started: a retry finds it abandoned once the call's time limit has passed, and goes by the retry mode.
      this.warn(receipt, e, 'complete');
    }
  }

  /** The recorded answer of a completed call, marked replayed; a refusal when it was over the result limit. */
  private replay(call: WriteCall, found: Receipt): CallToolResult {
    if (!found.answer_kept || found.answer === null)
      return refusal(
        'result-not-kept',
        `${call.name} with the idempotency key ${JSON.stringify(found.key)} already ran (${found.completed_at}, ${found.outcome}${found.code === null ? '' : `: ${found.code}`}), ` +
          `but its answer was longer than ${call.harness}'s result limit and was not kept: nothing ran`,
        found.key,
      );
    return withMeta(found.answer as CallToolResult, { [REPLAYED_META]: true });
  }

  private inProgress(call: WriteCall, found: Receipt): CallToolResult {
    return refusal(
      'in-progress',
      `${call.name} with the idempotency key ${JSON.stringify(found.key)} is still running (started ${found.started_at} on ${found.replica}) ` +
        `and did not finish within ${call.limits.callTimeoutMs} ms; call again later with the same key for its answer`,
      found.key,
    );
  }

  private storeFailed(call: WriteCall, key: string, e: unknown): CallToolResult {
    this.options.logger.error({ err: e, tool: call.name }, 'could not read or write a receipt');
    return refusal(
      'store-unavailable',
      `${call.name} was not called: its receipt could not be written or read (the store did not answer)`,
      key,
    );
  }

  /** Marks `receipt` as run by this process until `finish`. */
  private track(receipt: Receipt): { finish(): void } {
    const id = idKey(receipt);
    let finish!: () => void;
    const promise = new Promise<void>((resolve) => (finish = resolve));
    this.running.set(id, promise);
    return {
      finish: () => {
        if (this.running.get(id) === promise) this.running.delete(id);
        finish();
      },
    };
  }

  private warn(receipt: Receipt, e: unknown, what: string): void {
    this.options.logger.warn({ err: e, harness: receipt.harness, tool: receipt.tool }, `could not ${what} a receipt`);
  }
}
