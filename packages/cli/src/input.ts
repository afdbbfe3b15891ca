import { open } from 'node:fs/promises';
import { Manifest, isManifestError, readManifestFile, type ManifestError } from '@berm/manifest';
import { CliError } from './failure.js';
import { fileError } from './file-error.js';

/**
 * The files commands read, and every way reading them fails turned into a `CliError` that
 * names the file: the filesystem's errors and the manifest reader's alike.
 */

/** The manifest of the image (wasm or ELF) at `file`, read with positioned reads. */
export async function readImage(file: string): Promise<Manifest> {
  try {
    return await readManifestFile(file);
  } catch (e) {
    throw inputError(file, e);
  }
}

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];
const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];

/**
 * The manifest in `file`, an image or a manifest JSON file (`crab inspect --json` output),
 * told apart by content: the wasm or ELF magic makes an image, anything else must be JSON.
 */
export async function readImageOrManifest(file: string): Promise<Manifest> {
  let bytes: Uint8Array | undefined;
  try {
    const handle = await open(file, 'r');
    try {
      const head = new Uint8Array(4);
      const { bytesRead } = await handle.read(head, 0, 4, 0);
      const isImage = bytesRead === 4 && [WASM_MAGIC, ELF_MAGIC].some((magic) => magic.every((b, i) => head[i] === b));
      if (!isImage) bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (e) {
    throw inputError(file, e);
  }
  if (bytes === undefined) return readImage(file);

  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CliError('not-image-or-manifest', `'${file}' is neither a berm image nor manifest JSON: it is not UTF-8 text`, { file });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    // The parser quotes a short file whole, line breaks and all; the report stays one line.
    const why = (e instanceof Error ? e.message : String(e)).replace(/\r/g, '\\r').replace(/\n/g, '\\n');
    throw new CliError('not-image-or-manifest', `'${file}' is neither a berm image nor manifest JSON: ${why}`, { file });
  }
  try {
    return Manifest.fromJSON(value);
  } catch (e) {
    throw inputError(file, e);
  }
}

/** What the reader's codes say about a file, before the reader's own message. */
const LEADS: Record<string, string> = {
  'not-an-image': 'is not a berm image',
  'component-not-supported': 'is not a berm image',
  'truncated': 'is not a berm image',
  'bad-module': 'is not a berm image',
  'no-manifest': 'has no berm manifest',
  'bad-record': 'has a bad manifest record',
  'invalid-manifest': 'has an invalid manifest',
  'effect-unknown-tool': 'has an invalid manifest',
  'effect-reconcile-not-query': 'has an invalid manifest',
  'effect-reconcile-missing': 'has an invalid manifest',
  'effect-reconcile-arguments': 'has an invalid manifest',
  'effect-on-query': 'has an invalid manifest',
};

/** A failure to read `file`, as a `CliError` naming it; anything unforeseen passes through. */
export function inputError(file: string, e: unknown): unknown {
  return isManifestError(e) ? manifestInputError(file, e) : fileError(file, e);
}

function manifestInputError(file: string, e: ManifestError): CliError {
  const lead = `'${file}' ${LEADS[e.code] ?? 'cannot be read'}`;
  // The reader's messages usually say where already; the location is added only when they do
  // not, and byte 0 (the file's first bytes are wrong) goes without saying.
  const where: string[] = [];
  if (e.offset && !e.message.includes(`byte ${e.offset}`)) where.push(`byte ${e.offset}`);
  if (e.path && !e.message.includes(e.path)) where.push(e.path);
  const located = where.length ? `${e.message} (at ${where.join(', ')})` : e.message;
  // `invalid manifest at /tools/0: ...` reads on from the lead without repeating it.
  const rest = /^invalid manifest (at .*)$/s.exec(located);
  const line = rest ? `${lead} ${rest[1]}` : `${lead}: ${located}`;
  return new CliError(e.code, line, { file, offset: e.offset, path: e.path });
}
