/**
 * The directory store's retained images: `<state>/images/<name>/<hex>.wasm`, one per digest, and
 * `index.json` beside them, the records (digest, version, bindings, when it stopped being served), most
 * recently served first.
 *
 * An image is retained by a hard link to the file being replaced, made before the deploy's or undeploy's
 * commit point, so keeping it costs no copy and a stop leaves it kept or not, never torn (where a link
 * cannot be made, across file systems, the bytes are copied through a temp file). The index is written
 * after the file, so a record always has its file; a file without a record (a stop between the two, or
 * during a trim) is removed by the next trim. A record of the digest still served (a stop before the
 * commit) is left out when read.
 */
import { link, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { digestOf } from './checks.js';
import type { RetainedImage } from './history.js';
import { decodeRetained } from './retention.js';
import { exists, syncDir, TEMP_PREFIX, writeAtomic } from './directory-files.js';

const INDEX = 'index.json';

export class RetainedImages {
  constructor(readonly root: string) {}

  dir(name: string): string {
    return path.join(this.root, name);
  }

  private file(name: string, digest: string): string {
    return path.join(this.dir(name), `${digest.slice('sha256:'.length)}.wasm`);
  }

  /** The records of `name`, most recently served first; empty when none or the index does not read. */
  async read(name: string): Promise<RetainedImage[]> {
    let value: unknown;
    try {
      value = JSON.parse(await readFile(path.join(this.dir(name), INDEX), 'utf8'));
    } catch {
      return [];
    }
    const list = Array.isArray((value as { images?: unknown })?.images) ? (value as { images: unknown[] }).images : [];
    const seen = new Set<string>();
    const out: RetainedImage[] = [];
    for (const item of list) {
      const record = decodeRetained(item);
      if (record === null || seen.has(record.digest)) continue;
      seen.add(record.digest);
      out.push(record);
    }
    return out;
  }

  /** Keeps the image at `source` (a stored harness's file) as `record`, at the head of `name`'s list. */
  async retain(name: string, source: string, record: RetainedImage): Promise<void> {
    const dir = this.dir(name);
    await mkdir(dir, { recursive: true });
    const target = this.file(name, record.digest);
    if (!(await exists(target))) {
      try {
        await link(source, target);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        if (code !== 'EEXIST') {
          // No hard link here (a file system without them): a copy, made whole before it is named.
          await writeAtomic(target, await readFile(source));
        }
      }
    }
    const records = (await this.read(name)).filter((r) => r.digest !== record.digest);
    await this.writeIndex(name, [record, ...records]);
  }

  /**
   * Keeps the `keep` most recent records other than `served`'s, and only their files; removes the
   * directory when nothing is kept. Temp files a stop left go too.
   */
  async trim(name: string, keep: number, served: string | null): Promise<void> {
    const dir = this.dir(name);
    if (!(await exists(dir))) return;
    const records = await this.read(name);
    const kept = records.filter((r) => r.digest !== served).slice(0, keep);
    if (kept.length === 0) {
      await this.forget(name);
      return;
    }
    if (kept.length !== records.length) await this.writeIndex(name, kept);
    const files = new Set(kept.map((r) => path.basename(this.file(name, r.digest))));
    let removed = false;
    for (const entry of await readdir(dir)) {
      if (entry === INDEX || files.has(entry)) continue;
      await rm(path.join(dir, entry), { force: true });
      removed = true;
    }
    if (removed) await syncDir(dir);
  }

  /**
   * The bytes of an image the caller found among `name`'s records, checked against its digest (a file
   * edited by hand is no image of it); null when its file is gone or holds another image.
   */
  async bytes(name: string, digest: string): Promise<Buffer | null> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.file(name, digest));
    } catch {
      return null;
    }
    return digestOf(bytes) === digest ? bytes : null;
  }

  /** Removes every retained image of `name`. */
  async forget(name: string): Promise<void> {
    await rm(this.dir(name), { recursive: true, force: true });
    await syncDir(this.root);
  }

  /** Names with a directory here, temp files aside. */
  async names(): Promise<string[]> {
    return (await readdir(this.root)).filter((n) => !n.startsWith(TEMP_PREFIX));
  }

  private async writeIndex(name: string, records: RetainedImage[]): Promise<void> {
    await writeAtomic(path.join(this.dir(name), INDEX), Buffer.from(JSON.stringify({ images: records })));
    await syncDir(this.dir(name));
  }
}
