/**
 * How the directory store writes a file so that a stop at any point leaves it whole, old or new: a temp
 * file written and fsynced, renamed over the target, and the directory fsynced. Temp files begin with
 * TEMP_PREFIX (no harness name can: a name begins with a letter) and are removed on open.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';

export const TEMP_PREFIX = '.tmp-';

/** Writes `bytes` to a new temp file in `dir`, fsynced; answers its path. */
export async function writeTemp(dir: string, stem: string, bytes: Uint8Array): Promise<string> {
  const temp = path.join(dir, `${TEMP_PREFIX}${stem}-${randomBytes(6).toString('hex')}`);
  const handle = await open(temp, 'wx', 0o644);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } catch (e) {
    await handle.close();
    await rm(temp, { force: true });
    throw e;
  }
  await handle.close();
  return temp;
}

/** Replaces `target` with `bytes` whole (the directory still to be synced: `syncDir`). */
export async function writeAtomic(target: string, bytes: Uint8Array): Promise<void> {
  const temp = await writeTemp(path.dirname(target), path.basename(target, path.extname(target)), bytes);
  try {
    await rename(temp, target);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
}

/** Makes the renames in `dir` durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}
