/**
 * An image argument that may be a registry reference rather than a file, and what the commands read
 * through one: the manifest an image declares (from berm's manifest layer when the artifact has one,
 * else from the module's layer by range reads, never the whole image unless the registry ignores Range)
 * and the image itself, pulled and checked against its digests.
 */
import { stat } from 'node:fs/promises';
import { type ByteSource, isManifestError, Manifest, readManifestSource } from '@berm/manifest';
import {
  type Descriptor,
  fetchBlob,
  fetchRange,
  formatReference,
  looksLikeBareReference,
  parseReference,
  type Reference,
  Registry,
  resolve,
  type Resolved,
  SCHEME,
} from '@berm/oci';
import { CliError } from '../failure.js';
import type { RegistrySettings } from './settings.js';

/** The berm manifest layer is JSON of a manifest: far below this; more is not one crab pushed. */
const MAX_MANIFEST_LAYER = 4 * 1024 * 1024;

/** Range reads ask for at least this much, so a module's leading small sections cost one request. */
const WINDOW = 64 * 1024;

/**
 * `text` as a reference when it is one: `oci://…` always; a bare `HOST/REPO:TAG` only when no file by
 * that name exists. Undefined means a path.
 */
export async function referenceOf(text: string): Promise<Reference | undefined> {
  if (text.startsWith(SCHEME)) return parseReference(text);
  if (!looksLikeBareReference(text)) return undefined;
  try {
    await stat(text);
    return undefined;
  } catch {
    return parseReference(text);
  }
}

export function openRegistry(ref: Reference, settings: RegistrySettings): Registry {
  return new Registry(ref.host, { insecure: settings.insecure });
}

/** The manifest the artifact at `ref` declares, reading no more of it than it must. */
export async function readReferenceManifest(
  ref: Reference,
  settings: RegistrySettings,
): Promise<{ manifest: Manifest; resolved: Resolved }> {
  const registry = openRegistry(ref, settings);
  const where = formatReference(ref);
  try {
    const resolved = await resolve(registry, ref);
    const { bermManifest, wasm } = resolved.layers;
    if (bermManifest !== undefined) {
      const bytes = await fetchBlob(registry, ref, bermManifest, { maxSize: MAX_MANIFEST_LAYER });
      try {
        return { manifest: Manifest.fromJSON(JSON.parse(new TextDecoder().decode(bytes))), resolved };
      } catch (e) {
        throw referenceInputError(where, e, 'its berm manifest layer');
      }
    }
    if (wasm.size > settings.maxImageSize) await fetchBlob(registry, ref, wasm, { maxSize: settings.maxImageSize });
    try {
      return { manifest: await readManifestSource(new BlobSource(registry, ref, wasm, settings.maxImageSize), wasm.size), resolved };
    } catch (e) {
      throw referenceInputError(where, e, 'its wasm layer');
    }
  } finally {
    await registry.close();
  }
}

export interface PulledImage {
  bytes: Uint8Array;
  /** The reference pinned to the manifest's digest. */
  pinned: string;
  resolved: Resolved;
}

/** The image at `ref` (a digest given in `ref` is checked), its layer checked against its digest and bounded. */
export async function pullImage(ref: Reference, settings: RegistrySettings): Promise<PulledImage> {
  const registry = openRegistry(ref, settings);
  try {
    const resolved = await resolve(registry, ref);
    // The layer is read by the manifest's digest, so a tag moved after this still yields what was resolved.
    const pinnedRef = { ...ref, digest: resolved.digest };
    const bytes = await fetchBlob(registry, pinnedRef, resolved.layers.wasm, { maxSize: settings.maxImageSize });
    return { bytes, pinned: formatReference(pinnedRef), resolved };
  } finally {
    await registry.close();
  }
}

/** A reader's failure on what a registry served, as the command line says a file's. */
function referenceInputError(where: string, e: unknown, part: string): unknown {
  if (isManifestError(e))
    return new CliError(e.code, `${where} (${part}) ${e.message}`, { reference: where, offset: e.offset, path: e.path });
  if (e instanceof SyntaxError)
    return new CliError('invalid-manifest', `${where} (${part}) is not JSON: ${e.message}`, { reference: where });
  return e;
}

/** A module's layer as positioned reads: HTTP Range requests, or the whole blob once a registry ignores Range. */
class BlobSource implements ByteSource {
  private window: Uint8Array = new Uint8Array(0);
  private windowStart = 0;
  private whole: Uint8Array | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly ref: Reference,
    private readonly layer: Descriptor,
    private readonly maxSize: number,
  ) {}

  async read(offset: number, length: number): Promise<Uint8Array> {
    if (this.whole !== undefined) return this.whole.subarray(offset, offset + length);
    const inWindow = offset - this.windowStart;
    if (inWindow >= 0 && inWindow + length <= this.window.length) return this.window.subarray(inWindow, inWindow + length);
    const { partial, bytes } = await fetchRange(this.registry, this.ref, this.layer, offset, Math.max(length, WINDOW), {
      maxSize: this.maxSize,
    });
    if (!partial) {
      this.whole = bytes;
      return bytes.subarray(offset, offset + length);
    }
    this.window = bytes;
    this.windowStart = offset;
    return bytes.subarray(0, length);
  }
}
