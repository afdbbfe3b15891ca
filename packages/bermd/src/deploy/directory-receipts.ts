/**
 * Receipts in the state directory: `<state>/receipts/<harness>/<digest>.json`, one file per receipt,
 * named by the SHA-256 of its id (principal, tool, key), each written whole as the store's other files
 * are (directory-files.ts). A directory belongs to one process, whose in-process queue per receipt
 * serialises what `begin`, `takeOver` and `complete` compare and write.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { isHarnessName } from '@berm/protocol';
import { syncDir, TEMP_PREFIX, writeAtomic } from './directory-files.js';
import { KeyedQueue } from './keyed-queue.js';
import { DEFAULT_RECEIPT_RETENTION_MS, type Receipt, type ReceiptId, type ReceiptQuery, type ReceiptStore } from './receipts.js';

function fileOf(id: ReceiptId): string {
  return `${createHash('sha256')
    .update(JSON.stringify([id.principal, id.tool, id.key]))
    .digest('hex')}.json`;
}

export class DirectoryReceipts implements ReceiptStore {
  private readonly holds = new KeyedQueue();
  /** The harness directories made by this process: a write need not ask again. */
  private readonly made = new Set<string>();

  constructor(
    readonly root: string,
    private readonly retentionMs = DEFAULT_RECEIPT_RETENTION_MS,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Makes the directory and removes what a stop in the middle of a write left. */
  async open(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    for (const harness of await readdir(this.root)) {
      for (const entry of await readdir(path.join(this.root, harness)).catch(() => []))
        if (entry.startsWith(TEMP_PREFIX)) await rm(path.join(this.root, harness, entry), { force: true });
    }
  }

  async begin(receipt: Receipt): Promise<Receipt | null> {
    return this.hold(receipt, async (file) => {
      const found = await readReceipt(file);
      if (found !== null) return found;
      await this.write(file, receipt, true);
      return null;
    });
  }

  async takeOver(previous: string, next: Receipt): Promise<boolean> {
    return this.hold(next, async (file) => {
      const found = await readReceipt(file);
      if (found === null || found.attempt !== previous) return false;
      await this.write(file, next, false);
      return true;
    });
  }

  async complete(receipt: Receipt): Promise<boolean> {
    return this.hold(receipt, async (file) => {
      const found = await readReceipt(file);
      if (found === null || found.attempt !== receipt.attempt) return false;
      await this.write(file, receipt, false);
      return true;
    });
  }

  async forget(id: ReceiptId, attempt: string): Promise<void> {
    await this.hold(id, async (file) => {
      const found = await readReceipt(file);
      if (found?.attempt === attempt) await rm(file, { force: true });
    });
  }

  async read(id: ReceiptId): Promise<Receipt | null> {
    return readReceipt(this.pathOf(id));
  }

  async list(harness: string, query: ReceiptQuery = {}): Promise<Receipt[]> {
    if (!isHarnessName(harness)) return [];
    const dir = path.join(this.root, harness);
    const out: Receipt[] = [];
    for (const entry of await readdir(dir).catch(() => [])) {
      if (entry.startsWith(TEMP_PREFIX) || !entry.endsWith('.json')) continue;
      const receipt = await readReceipt(path.join(dir, entry));
      if (receipt !== null && (query.key === undefined || receipt.key === query.key)) out.push(receipt);
    }
    out.sort((a, b) => (a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0));
    return query.limit === undefined ? out : out.slice(0, query.limit);
  }

  async prune(now: Date = this.clock()): Promise<number> {
    const cutoff = now.getTime() - this.retentionMs;
    let gone = 0;
    for (const harness of await readdir(this.root).catch(() => [])) {
      const dir = path.join(this.root, harness);
      for (const entry of await readdir(dir).catch(() => [])) {
        if (!entry.endsWith('.json')) continue;
        const file = path.join(dir, entry);
        const receipt = await readReceipt(file);
        if (receipt !== null && Date.parse(receipt.started_at) >= cutoff) continue;
        await this.holds.run(file, () => rm(file, { force: true }));
        gone++;
      }
    }
    return gone;
  }

  async ageOf(receipt: Receipt): Promise<number> {
    return this.clock().getTime() - Date.parse(receipt.started_at);
  }

  private pathOf(id: ReceiptId): string {
    return path.join(this.root, id.harness, fileOf(id));
  }

  private hold<T>(id: ReceiptId, work: (file: string) => Promise<T>): Promise<T> {
    const file = this.pathOf(id);
    return this.holds.run(file, () => work(file));
  }

  /**
   * Writes `receipt` whole over `file`. A new file's name is made durable (`fresh`: the directory synced)
   * before the guest may run; a receipt replacing one is not, since losing that rename to a crash leaves
   * the receipt it replaced, a started attempt, which a retry finds abandoned as it would after a crash
   * just before the write. The content is synced either way: a rename may not outlive its data.
   */
  private async write(file: string, receipt: Receipt, fresh: boolean): Promise<void> {
    const dir = path.dirname(file);
    if (!this.made.has(dir)) {
      await mkdir(dir, { recursive: true });
      this.made.add(dir);
    }
    await writeAtomic(file, Buffer.from(JSON.stringify(receipt)));
    if (fresh) await syncDir(dir);
  }
}

/** The receipt in `file`; null when there is none (or what is there is not one, as a stop never leaves). */
async function readReceipt(file: string): Promise<Receipt | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    const value = JSON.parse(text) as Receipt;
    return typeof value === 'object' && value !== null && typeof value.attempt === 'string' ? value : null;
  } catch {
    return null;
  }
}
