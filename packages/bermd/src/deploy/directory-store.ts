/**
 * The deployed set on disk: `<state>/harnesses/<name>.wasm` (the image, as deployed) and
 * `<name>.json` (metadata: digest, deployed_at, deployed_by, last_used_at).
 *
 * Crash safety. Each file is replaced by writing a temp file, fsyncing it, renaming it over the
 * target and fsyncing the directory, so each file is always whole, old or new. The image is the
 * source of truth and its rename is the commit point of a deploy (its unlink that of an undeploy);
 * the metadata is renamed second and names the digest of the image it describes. A stop between
 * the two renames leaves a new image beside old metadata: on load the digests differ, and the
 * metadata is derived again from the image (deployed_at from the image file's mtime). Metadata
 * without an image is a leftover of an undeploy and is removed. Temp files begin with a dot, which
 * no harness name can, and are removed on open.
 *
 * Bindings (the operator's limits and grants for a harness) live in the metadata, keyed by the digest of
 * the image they were given with, because they belong to one deploy of one image. A deploy with
 * bindings writes the metadata first, still describing the old image but holding the new image's
 * bindings beside the old one's; then the image; then the final metadata. So whichever image a stop
 * leaves, the metadata beside it holds that image's bindings: the old image with the old metadata, or
 * the new image with metadata naming the old digest, which is repaired from the image keeping the
 * bindings recorded for the new digest. A digest without recorded bindings has the defaults, which is
 * also what a deploy without bindings stores. The same image with new bindings commits at the first
 * write, which is then the new deploy's metadata whole (its deploy time and deployer with the bindings).
 *
 * History. Each name's entries are `<state>/history/<name>.json` (its sequence counter and at most
 * MAX_HISTORY_ENTRIES entries, oldest first), replaced whole as the other files are, and kept past an
 * undeploy. An entry cannot be renamed into place at the same instant as the image, so it travels in the
 * metadata as `pending`: a deploy's first metadata write (now made for every deploy) carries it beside
 * the old image, the final metadata carries it too, and it joins the history file once its change is
 * found to have taken effect: the image is the entry's `to` (for a redeploy of the same image, the
 * metadata's deploy time is the entry's), or for an undeploy, the image is gone. Each deploy and undeploy
 * appends it once it is durable; what a stop interrupted is settled when the name is next held (a
 * transaction, a history read, a load's repair, the sweep), and a pending entry whose change never
 * took effect is dropped. The entry's id keeps a settled entry from being appended twice.
 *
 * A state directory belongs to one process: a transaction's hold on a name is the in-process queue of
 * that name, and nothing is watched for changes made elsewhere.
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, readFile, readdir, rename, rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import { isHarnessName } from '@berm/protocol';
import { laterUse, mergeUsage, type UsageRecord } from './gate.js';
import { KeyedQueue } from './keyed-queue.js';
import { digestOf } from './checks.js';
import {
  cursorPosition,
  encodeCursor,
  decodeEntry,
  type HistoryEntry,
  type HistoryPage,
  type HistoryQuery,
  MAX_HISTORY_ENTRIES,
  pageSize,
  type RetainedImage,
  type UndeployedName,
} from './history.js';
import type { HarnessMeta, HarnessStore, PendingEntry, StoredHarness, StoredHead, StoreTransaction } from './store.js';
import { decodeMeta, encodeMeta, onlyCurrent } from './store-codec.js';
import { checkAgainstImage } from './store-repair.js';
import { reached } from '../faults.js';
import { exists, syncDir, TEMP_PREFIX, writeAtomic, writeTemp } from './directory-files.js';
import { RetainedImages } from './directory-retained.js';
import { DirectoryReceipts } from './directory-receipts.js';
import { entryKept, forgotten, imagesKept, retentionCutoff, retentionPolicy, type RetentionPolicy } from './retention.js';

/** A history file: the next entry's sequence number, and the entries, oldest first. */
interface HistoryFile {
  next: number;
  entries: Array<{ seq: number; id: string; entry: HistoryEntry }>;
}

export class DirectoryStore implements HarnessStore {
  readonly dir: string;
  readonly historyDir: string;
  readonly location: string;
  private readonly holds = new KeyedQueue();
  private readonly images: RetainedImages;
  private readonly policy: RetentionPolicy;
  readonly receipts: DirectoryReceipts;

  private constructor(stateDir: string, dir: string, policy: RetentionPolicy) {
    this.receipts = new DirectoryReceipts(path.join(stateDir, 'receipts'), policy.receiptRetentionMs, policy.now);
    this.location = stateDir;
    this.dir = dir;
    this.historyDir = path.join(stateDir, 'history');
    this.images = new RetainedImages(path.join(stateDir, 'images'));
    this.policy = policy;
  }

  /** Opens (creating it if needed) the store under `stateDir`, removing temp files a stopped deploy left. */
  static async open(stateDir: string, retention?: Partial<RetentionPolicy>): Promise<DirectoryStore> {
    const dir = path.join(stateDir, 'harnesses');
    await mkdir(dir, { recursive: true });
    const store = new DirectoryStore(stateDir, dir, retentionPolicy(retention));
    await mkdir(store.historyDir, { recursive: true });
    await mkdir(store.images.root, { recursive: true });
    await store.receipts.open();
    for (const d of [dir, store.historyDir, store.images.root]) {
      for (const entry of await readdir(d)) {
        if (entry.startsWith(TEMP_PREFIX)) await rm(path.join(d, entry), { force: true });
      }
    }
    return store;
  }

  imagePath(name: string): string {
    return path.join(this.dir, `${name}.wasm`);
  }

  metaPath(name: string): string {
    return path.join(this.dir, `${name}.json`);
  }

  /** Names with a stored image, sorted. */
  async names(): Promise<string[]> {
    const entries = await readdir(this.dir);
    const names: string[] = [];
    for (const entry of entries) {
      if (!entry.endsWith('.wasm')) continue;
      const name = entry.slice(0, -'.wasm'.length);
      if (isHarnessName(name)) names.push(name);
    }
    return names.sort();
  }

  /** Reads one stored harness, repairing its metadata from the image when the two disagree (`checkAgainstImage`). */
  async load(name: string): Promise<StoredHarness | null> {
    const image = await this.readImageFile(name);
    if (image === null) return null;
    // A repaired record's deploy time is the image file's: its rename was the deploy's commit.
    const read = await this.readMeta(name);
    const check = checkAgainstImage(name, image.bytes, read, image.mtime.toISOString());
    if (check.repaired) {
      // The repair drops the pending entry: settle it first.
      if (read !== null) await this.settle(name, read);
      await writeAtomic(this.metaPath(name), Buffer.from(encodeMeta(check.meta)));
      await syncDir(this.dir);
    }
    const { digest, meta, repaired } = check;
    return { name, bytes: image.bytes, digest, meta, revision: revisionOf(meta), repaired };
  }

  async heads(): Promise<StoredHead[]> {
    const heads: StoredHead[] = [];
    for (const name of await this.names()) {
      const head = await this.head(name);
      if (head !== null) heads.push(head);
    }
    return heads;
  }

  /**
   * Read from the metadata alone: within a process's life it names the image beside it (every write
   * leaves the two agreeing, and a stop between them is repaired by `load` on open). Metadata that is
   * missing or for another image is repaired from the image here too.
   */
  async head(name: string): Promise<StoredHead | null> {
    const meta = await this.readMeta(name);
    if (meta !== null && meta.name === name && (await exists(this.imagePath(name)))) return headOf(meta);
    const stored = await this.load(name);
    return stored === null ? null : headOf(stored.meta);
  }

  /** The hold on a name is this process's queue for it: a state directory belongs to one process. */
  transaction<T>(name: string, work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.holds.run(name, async () => {
      await this.settle(name);
      const tx: StoreTransaction = {
        current: await this.head(name),
        readImage: () => this.readImage(name),
        save: async (bytes, meta, _manifest, entry) => {
          await this.save(name, bytes, meta, entry);
          return revisionOf(meta);
        },
        remove: (entry) => this.remove(name, entry),
        retained: () => this.retainedNow(name),
        readRetained: (digest) => this.readRetainedNow(name, digest),
      };
      return work(tx);
    });
  }

  /** Metadata files whose image is gone: what an undeploy stopped halfway leaves. */
  async sweep(): Promise<string[]> {
    const removed: string[] = [];
    for (const entry of await readdir(this.dir)) {
      if (!entry.endsWith('.json') || entry.startsWith(TEMP_PREFIX)) continue;
      const name = entry.slice(0, -'.json'.length);
      if (!(await exists(this.imagePath(name)))) {
        if (isHarnessName(name)) await this.holds.run(name, () => this.settle(name));
        await rm(path.join(this.dir, entry), { force: true });
        removed.push(name);
      }
    }
    if (removed.length > 0) await syncDir(this.dir);
    return removed;
  }

  async readImage(name: string): Promise<Buffer | null> {
    try {
      return await readFile(this.imagePath(name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  /** The image and its file's mtime, read through one open file (so both are of the same file); null when none. */
  private async readImageFile(name: string): Promise<{ bytes: Buffer; mtime: Date } | null> {
    let handle: FileHandle;
    try {
      handle = await open(this.imagePath(name), 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    try {
      const { mtime } = await handle.stat();
      return { bytes: await handle.readFile(), mtime };
    } finally {
      await handle.close();
    }
  }

  /**
   * Stores an image and its metadata; the image's rename is the commit point (for the same image with new
   * bindings, the first metadata write is). `meta.bindings` holds the new image's bindings, if any.
   */
  private async save(name: string, bytes: Uint8Array, meta: HarnessMeta, entry: HistoryEntry): Promise<void> {
    const pending: PendingEntry = { id: randomBytes(8).toString('hex'), entry };
    const fresh = meta.bindings?.[meta.digest];
    const current = await this.readMeta(name);
    if (current !== null && current.digest !== meta.digest && imagesKept(this.policy, true) > 0) await this.retain(name, current, entry);
    // The same image with new bindings commits at this write: it is then the new deploy's metadata whole
    // (its deploy time included, which is how `settle` tells that its entry took effect), not the old
    // deploy's holding the new bindings, which a stop would leave served with no entry saying so.
    const first: HarnessMeta =
      current === null
        ? { ...meta, bindings: fresh === undefined ? undefined : { [meta.digest]: fresh }, pending }
        : current.digest === meta.digest && fresh !== undefined
          ? { ...meta, bindings: { [meta.digest]: fresh }, pending }
          : { ...current, bindings: fresh === undefined ? current.bindings : { ...onlyCurrent(current), [meta.digest]: fresh }, pending };
    await writeAtomic(this.metaPath(name), Buffer.from(encodeMeta(first)));
    await syncDir(this.dir);
    if (fresh !== undefined) reached('store-bindings-written');
    meta = { ...meta, pending };
    const imageTemp = await writeTemp(this.dir, name, bytes);
    reached('store-image-written');
    let metaTemp: string | undefined;
    try {
      metaTemp = await writeTemp(this.dir, name, Buffer.from(encodeMeta(meta)));
      reached('store-meta-written');
      await rename(imageTemp, this.imagePath(name));
      reached('store-image-renamed');
      await rename(metaTemp, this.metaPath(name));
      reached('store-meta-renamed');
    } catch (e) {
      await rm(imageTemp, { force: true });
      if (metaTemp !== undefined) await rm(metaTemp, { force: true });
      throw e;
    }
    await syncDir(this.dir);
    reached('store-synced');
    await this.appendHistory(name, pending);
    await this.images.trim(name, imagesKept(this.policy, true), meta.digest);
  }

  /** Keeps the image `current` describes (the file about to be replaced or removed), before the change's commit point. */
  private async retain(name: string, current: HarnessMeta, entry: HistoryEntry): Promise<void> {
    await this.images.retain(name, this.imagePath(name), {
      digest: current.digest,
      version: entry.from?.digest === current.digest ? entry.from.version : null,
      retained_at: entry.at,
      bindings: current.bindings?.[current.digest] ?? {},
      ...(current.source === undefined ? {} : { source: current.source }),
    });
  }

  async saveUsage(name: string, used: UsageRecord, lastUsedAt: string | null): Promise<void> {
    await this.holds.run(name, async () => {
      const meta = await this.readMeta(name);
      if (meta === null || !(await exists(this.imagePath(name)))) return;
      mergeUsage(meta.used, used);
      meta.last_used_at = laterUse(meta.last_used_at, lastUsedAt);
      await writeAtomic(this.metaPath(name), Buffer.from(encodeMeta(meta)));
      await syncDir(this.dir);
    });
  }

  async close(): Promise<void> {
    await this.holds.drain();
    await this.receipts.close();
  }

  /** Removes a harness; the image's unlink is the commit point. Returns false when nothing was stored. */
  private async remove(name: string, entry: HistoryEntry): Promise<boolean> {
    const pending: PendingEntry = { id: randomBytes(8).toString('hex'), entry };
    if (await exists(this.imagePath(name))) {
      // The entry waits in the metadata; an image without any has it derived first.
      const meta = (await this.readMeta(name)) ?? (await this.load(name))?.meta ?? null;
      if (meta !== null) {
        await this.retain(name, meta, entry);
        await writeAtomic(this.metaPath(name), Buffer.from(encodeMeta({ ...meta, pending })));
        await syncDir(this.dir);
        reached('undeploy-image-retained');
      }
    }
    let removed = true;
    try {
      await unlink(this.imagePath(name));
      reached('undeploy-image-removed');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      removed = false;
    }
    if (removed) await this.appendHistory(name, pending);
    await rm(this.metaPath(name), { force: true });
    await syncDir(this.dir);
    await this.images.trim(name, imagesKept(this.policy, false), null);
    return removed;
  }

  async retained(name: string): Promise<RetainedImage[]> {
    if (!isHarnessName(name)) return [];
    return this.holds.run(name, () => this.retainedNow(name));
  }

  /** What `name` keeps besides the image it serves, within the policy's bound (a trim a stop cut short reads as done). */
  private async retainedNow(name: string, served?: string | null): Promise<RetainedImage[]> {
    served ??= await this.servedDigest(name);
    const records = (await this.images.read(name)).filter((r) => r.digest !== served);
    return records.slice(0, imagesKept(this.policy, served !== null));
  }

  /** The digest of the image stored under `name`, null when none. */
  private async servedDigest(name: string): Promise<string | null> {
    return (await this.head(name))?.digest ?? null;
  }

  async readRetained(name: string, digest: string): Promise<Buffer | null> {
    if (!isHarnessName(name)) return null;
    return this.holds.run(name, () => this.readRetainedNow(name, digest));
  }

  private async readRetainedNow(name: string, digest: string): Promise<Buffer | null> {
    const served = await this.servedDigest(name);
    if (served === digest) return this.readImage(name);
    if (!(await this.retainedNow(name, served)).some((r) => r.digest === digest)) return null;
    return this.images.bytes(name, digest);
  }

  async undeployed(): Promise<UndeployedName[]> {
    const cutoff = retentionCutoff(this.policy);
    const found: UndeployedName[] = [];
    for (const name of await this.historyNames()) {
      if (await exists(this.imagePath(name))) continue;
      const newest = (await this.readHistory(name)).entries.at(-1)?.entry;
      if (newest?.action === 'undeploy' && !forgotten(newest, cutoff)) found.push({ name, entry: newest });
    }
    return found.sort((a, b) => Date.parse(b.entry.at) - Date.parse(a.entry.at) || (a.name < b.name ? -1 : 1));
  }

  async prune(): Promise<string[]> {
    const forgottenNames: string[] = [];
    const names = new Set([...(await this.historyNames()), ...(await this.images.names()).filter(isHarnessName)]);
    for (const name of [...names].sort()) {
      const gone = await this.holds.run(name, async () => {
        await this.settle(name);
        const served = await this.servedDigest(name);
        const file = await this.readHistory(name);
        if (served === null && forgotten(file.entries.at(-1)?.entry, retentionCutoff(this.policy))) {
          await rm(this.historyPath(name), { force: true });
          await syncDir(this.historyDir);
          await this.images.forget(name);
          return file.entries.length > 0;
        }
        await this.writeHistory(name, file, false);
        await this.images.trim(name, imagesKept(this.policy, served !== null), served);
        return false;
      });
      if (gone) forgottenNames.push(name);
    }
    return forgottenNames;
  }

  /** Names with a history file. */
  private async historyNames(): Promise<string[]> {
    const names: string[] = [];
    for (const entry of await readdir(this.historyDir)) {
      const name = entry.endsWith('.json') ? entry.slice(0, -'.json'.length) : '';
      if (isHarnessName(name)) names.push(name);
    }
    return names;
  }

  async history(name: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    const before = cursorPosition(name, query);
    const limit = pageSize(query);
    if (!isHarnessName(name)) return { entries: [], next_cursor: null };
    const file = await this.holds.run(name, async () => {
      await this.settle(name);
      return this.readHistory(name);
    });
    const older = file.entries.filter((e) => before === undefined || e.seq < before).reverse();
    const page = older.slice(0, limit);
    const last = page.at(-1);
    return {
      entries: page.map((e) => e.entry),
      next_cursor: older.length > limit && last !== undefined ? encodeCursor(last.seq) : null,
    };
  }

  /**
   * Brings a pending entry the metadata carries into the history when its change took effect (see the
   * module's comment); one whose change did not is left, and the next write replaces it. Under the name's hold.
   */
  private async settle(name: string, read?: HarnessMeta): Promise<void> {
    const meta = read ?? (await this.readMeta(name));
    if (meta?.pending === undefined) return;
    const { entry } = meta.pending;
    let took: boolean;
    if (entry.to === null) took = !(await exists(this.imagePath(name)));
    else if (meta.digest === entry.to.digest && meta.deployed_at === entry.at) took = await exists(this.imagePath(name));
    else if (entry.from?.digest === entry.to.digest) took = false;
    else {
      const image = await this.readImage(name);
      took = image !== null && digestOf(image) === entry.to.digest;
    }
    if (took) await this.appendHistory(name, meta.pending);
  }

  /** Appends `pending` to the history file unless it holds it already, dropping the oldest past the bound. */
  private async appendHistory(name: string, pending: PendingEntry): Promise<void> {
    const file = await this.readHistory(name);
    if (file.entries.some((e) => e.id === pending.id)) return;
    file.entries.push({ seq: file.next, id: pending.id, entry: pending.entry });
    file.next += 1;
    await this.writeHistory(name, file);
  }

  /** Writes the history file with what the policy keeps of it: at most MAX_HISTORY_ENTRIES, the newest always; nothing when that changes nothing. */
  private async writeHistory(name: string, file: HistoryFile, changed = true): Promise<void> {
    const cutoff = retentionCutoff(this.policy);
    const kept = file.entries.slice(-MAX_HISTORY_ENTRIES).filter((e, i, all) => entryKept(e.entry, i === all.length - 1, cutoff));
    if (!changed && kept.length === file.entries.length) return;
    await writeAtomic(this.historyPath(name), Buffer.from(JSON.stringify({ next: file.next, entries: kept })));
    await syncDir(this.historyDir);
  }

  /** The history file, keeping only well-formed entries; empty when there is none or it does not read. */
  private async readHistory(name: string): Promise<HistoryFile> {
    let value: { next?: unknown; entries?: unknown };
    try {
      value = JSON.parse(await readFile(this.historyPath(name), 'utf8')) as typeof value;
    } catch {
      return { next: 1, entries: [] };
    }
    const entries: HistoryFile['entries'] = [];
    for (const e of Array.isArray(value?.entries) ? (value.entries as Array<Record<string, unknown>>) : []) {
      const entry = decodeEntry(e?.entry);
      if (entry !== null && Number.isSafeInteger(e.seq) && (e.seq as number) > 0 && typeof e.id === 'string')
        entries.push({ seq: e.seq as number, id: e.id, entry });
    }
    const top = Math.max(0, ...entries.map((e) => e.seq));
    const next = Number.isSafeInteger(value?.next) && (value.next as number) > top ? (value.next as number) : top + 1;
    return { next, entries };
  }

  historyPath(name: string): string {
    return path.join(this.historyDir, `${name}.json`);
  }

  private async readMeta(name: string): Promise<HarnessMeta | null> {
    try {
      return decodeMeta(await readFile(this.metaPath(name), 'utf8'));
    } catch {
      return null;
    }
  }
}

/** A deploy's time and image tell two deploys of a name apart, in one process. */
function revisionOf(meta: HarnessMeta): string {
  return `${meta.deployed_at} ${meta.digest}`;
}

function headOf(meta: HarnessMeta): StoredHead {
  return { name: meta.name, digest: meta.digest, revision: revisionOf(meta), last_used_at: meta.last_used_at, used: meta.used };
}
