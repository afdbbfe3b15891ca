import { open, type FileHandle } from 'node:fs/promises';
import { extractSection, manifestStream } from './image.js';
import { Manifest } from './manifest.js';
import { mergeRecords } from './records.js';
import { runOnSource, type ByteSource } from './source.js';

/**
 * Small reads (section headers, names) are served from one window read ahead of them, so walking
 * a module's leading small sections costs one read instead of one per section.
 */
const WINDOW = 64 * 1024;

/**
 * Reads the manifest of the image at `path` with positioned reads: only the section frames and the
 * `.berm.abi` bodies are read, never the code. Filesystem errors (ENOENT, EISDIR, EACCES...) are
 * Node's own, with their `code`; everything about the bytes is a `ManifestError`.
 */
export async function readManifestFile(path: string): Promise<Manifest> {
  return Manifest.fromJSON(mergeRecords(await readManifestStream(path)));
}

/**
 * Reads the manifest of an image of `size` bytes from any source of positioned reads (an HTTP blob read by
 * range): the same walk as a file's, so only the section frames and the `.berm.abi` bodies are asked for.
 */
export async function readManifestSource(source: ByteSource, size: number): Promise<Manifest> {
  return Manifest.fromJSON(mergeRecords(await runOnSource(manifestStream(size), source)));
}

/** The `.berm.abi` stream of the image at `path` (every occurrence joined in file order). */
export async function readManifestStream(path: string): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const stat = await handle.stat();
    // Pipes and devices have no size to walk; directories fail here with Node's EISDIR.
    if (!stat.isFile()) {
      return extractSection(await handle.readFile());
    }
    return await runOnSource(manifestStream(stat.size), new WindowedFile(handle, stat.size));
  } finally {
    await handle.close();
  }
}

class WindowedFile implements ByteSource {
  private window: Uint8Array = new Uint8Array(0);
  private windowStart = 0;

  constructor(
    private readonly handle: FileHandle,
    private readonly size: number,
  ) {}

  async read(offset: number, length: number): Promise<Uint8Array> {
    const inWindow = offset - this.windowStart;
    if (inWindow >= 0 && inWindow + length <= this.window.length) {
      return this.window.subarray(inWindow, inWindow + length);
    }
    if (length >= WINDOW) return this.readFully(offset, length);
    // A fresh buffer each time: views handed out earlier stay valid.
    this.window = await this.readFully(offset, Math.min(WINDOW, Math.max(length, this.size - offset)));
    this.windowStart = offset;
    return this.window.subarray(0, Math.min(length, this.window.length));
  }

  /** Reads until `length` bytes are in or the file ends; a short result means the file shrank. */
  private async readFully(offset: number, length: number): Promise<Uint8Array> {
    const buffer = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await this.handle.read(buffer, filled, length - filled, offset + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  }
}
