/**
 * Receipts in the state directory: one append-only journal, `<state>/receipts/journal.jsonl`, a JSON line
 * per write (a receipt put whole, or one forgotten), read back into memory at open. A directory belongs to
 * one process, which answers every read from memory and serialises, per receipt, what `begin`, `takeOver`
 * and `complete` compare and write.
 *
 * Why a journal rather than a file per receipt: a receipt must be on disk before its guest runs, and a file
 * per receipt paid two file syncs and a directory sync per call, one call at a time. Lines written while a
 * sync is under way wait for the next one and share it (a group commit), so calls in flight together pay
 * for one sync. The journal is rewritten whole, without what is forgotten or pruned, when it is opened and
 * when receipts are pruned.
 */
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import { isHarnessName } from '@berm/protocol';
import { syncDir, TEMP_PREFIX, writeTemp } from './directory-files.js';
import { KeyedQueue } from './keyed-queue.js';
import { DEFAULT_RECEIPT_RETENTION_MS, type Receipt, type ReceiptId, type ReceiptQuery, type ReceiptStore } from './receipts.js';

const JOURNAL = 'journal.jsonl';

/** A line of the journal. */
type Entry = { put: Receipt } | { forget: ReceiptId & { attempt: string } };

function idOf(id: ReceiptId): string {
  return JSON.stringify([id.harness, id.principal, id.tool, id.key]);
}

function isReceipt(value: unknown): value is Receipt {
  const r = value as Receipt;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.attempt === 'string' &&
    typeof r.harness === 'string' &&
    typeof r.principal === 'string' &&
    typeof r.tool === 'string' &&
    typeof r.key === 'string'
  );
}

export class DirectoryReceipts implements ReceiptStore {
  private readonly holds = new KeyedQueue();
  private readonly receipts = new Map<string, Receipt>();
  private journal: FileHandle | undefined;
  /** Lines waiting for the next write and sync, each with who waits for it. */
  private pending: Array<{ line: string; durable: boolean; done: (error?: unknown) => void }> = [];
  /** Every operation on the journal file, in order: a group's write and sync, or a rewrite. */
  private io: Promise<void> = Promise.resolve();
  private flushQueued = false;
  /** The journal's length in bytes once its last group was synced: where a failed write is cut back to. */
  private size = 0;

  constructor(
    readonly root: string,
    private readonly retentionMs = DEFAULT_RECEIPT_RETENTION_MS,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  private get file(): string {
    return path.join(this.root, JOURNAL);
  }

  /**
   * Reads the journal into memory and rewrites it compact. A stop in the middle of a write can leave its
   * last line cut short: that write was never answered as done, so it is dropped. Temp files a stop in the
   * middle of a rewrite left are removed.
   */
  async open(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    let text = '';
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      let entry: Entry;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        continue;
      }
      if ('put' in entry && isReceipt(entry.put)) this.receipts.set(idOf(entry.put), entry.put);
      else if ('forget' in entry && this.receipts.get(idOf(entry.forget))?.attempt === entry.forget.attempt)
        this.receipts.delete(idOf(entry.forget));
    }
    await this.rewrite();
  }

  /** Waits for what is being written, and closes the journal. */
  async close(): Promise<void> {
    await this.holds.drain();
    await this.io;
    await this.journal?.close();
    this.journal = undefined;
  }

  async begin(receipt: Receipt): Promise<Receipt | null> {
    return this.hold(receipt, async (id) => {
      const found = this.receipts.get(id);
      if (found !== undefined) return found;
      await this.append({ put: receipt });
      this.receipts.set(id, receipt);
      return null;
    });
  }

  async takeOver(previous: string, next: Receipt): Promise<boolean> {
    return this.hold(next, async (id) => {
      if (this.receipts.get(id)?.attempt !== previous) return false;
      await this.append({ put: next });
      this.receipts.set(id, next);
      return true;
    });
  }

  async complete(receipt: Receipt): Promise<boolean> {
    return this.hold(receipt, async (id) => {
      if (this.receipts.get(id)?.attempt !== receipt.attempt) return false;
      await this.append({ put: receipt }, false);
      this.receipts.set(id, receipt);
      return true;
    });
  }

  async forget(id: ReceiptId, attempt: string): Promise<void> {
    await this.hold(id, async (key) => {
      if (this.receipts.get(key)?.attempt !== attempt) return;
      const { principal, harness, tool, key: k } = id;
      await this.append({ forget: { principal, harness, tool, key: k, attempt } });
      this.receipts.delete(key);
    });
  }

  async read(id: ReceiptId): Promise<Receipt | null> {
    return this.receipts.get(idOf(id)) ?? null;
  }

  async list(harness: string, query: ReceiptQuery = {}): Promise<Receipt[]> {
    if (!isHarnessName(harness)) return [];
    const out = [...this.receipts.values()].filter((r) => r.harness === harness && (query.key === undefined || r.key === query.key));
    out.sort((a, b) => (a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0));
    return query.limit === undefined ? out : out.slice(0, query.limit);
  }

  /** Forgets the receipts started before the retention, in memory and then in a rewritten journal. */
  async prune(now: Date = this.clock()): Promise<number> {
    const cutoff = now.getTime() - this.retentionMs;
    let gone = 0;
    for (const [id, receipt] of [...this.receipts]) {
      if (Date.parse(receipt.started_at) >= cutoff) continue;
      await this.holds.run(id, async () => {
        const held = this.receipts.get(id);
        if (held !== undefined && Date.parse(held.started_at) < cutoff) {
          this.receipts.delete(id);
          gone++;
        }
      });
    }
    if (gone > 0) await this.rewrite();
    return gone;
  }

  async ageOf(receipt: Receipt): Promise<number> {
    return this.clock().getTime() - Date.parse(receipt.started_at);
  }

  private hold<T>(id: ReceiptId, work: (key: string) => Promise<T>): Promise<T> {
    const key = idOf(id);
    return this.holds.run(key, () => work(key));
  }

  /**
   * Resolves once `entry` is written to the journal with the lines queued beside it and, when `durable`,
   * synced. A completion need not wait for the sync: a write the process made survives its being killed,
   * and were the machine itself to stop first, the receipt would read as started, an abandoned attempt,
   * which the tool's retry mode answers as it answers a stop in the middle of the call.
   */
  private append(entry: Entry, durable = true): Promise<void> {
    const line = `${JSON.stringify(entry)}\n`;
    return new Promise((resolve, reject) => {
      this.pending.push({ line, durable, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!this.flushQueued) {
        this.flushQueued = true;
        this.io = this.io.then(() => this.flush());
      }
    });
  }

  /** Writes and syncs every line queued so far, together. */
  private async flush(): Promise<void> {
    this.flushQueued = false;
    const group = this.pending;
    this.pending = [];
    if (group.length === 0) return;
    const bytes = Buffer.from(group.map((p) => p.line).join(''));
    try {
      const journal = await this.handle();
      await journal.write(bytes);
      this.size += bytes.length;
      for (const p of group) if (!p.durable) p.done();
      if (group.some((p) => p.durable)) await journal.datasync();
      for (const p of group) if (p.durable) p.done();
    } catch (e) {
      // None of the group not yet answered is answered as done. What part of a failed write reached the
      // file is cut off, so that the next group's first line does not join a line cut short (a reader would
      // drop both); a failed sync leaves the lines written, as a stop of the machine might.
      for (const p of group) p.done(e);
      await this.journal?.close().catch(() => {});
      this.journal = undefined;
      await truncate(this.file, this.size).catch(() => {});
    }
  }

  private async handle(): Promise<FileHandle> {
    this.journal ??= await open(this.file, 'a', 0o644);
    return this.journal;
  }

  /** Writes the receipts held in memory as a new journal and puts it in the old one's place, durably. */
  private rewrite(): Promise<void> {
    const next = this.io.then(async () => {
      for (const entry of await readdir(this.root))
        if (entry.startsWith(TEMP_PREFIX)) await rm(path.join(this.root, entry), { force: true });
      const bytes = Buffer.from([...this.receipts.values()].map((put) => `${JSON.stringify({ put })}\n`).join(''));
      const temp = await writeTemp(this.root, 'journal', bytes);
      await this.journal?.close();
      this.journal = undefined;
      await rename(temp, this.file).catch(async (e) => {
        await rm(temp, { force: true });
        throw e;
      });
      await syncDir(this.root);
      this.size = bytes.length;
    });
    this.io = next.catch(() => {});
    return next;
  }
}
