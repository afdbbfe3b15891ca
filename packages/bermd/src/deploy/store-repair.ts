/**
 * The one repair every store makes when it reads a harness: the image is the source of truth, so
 * metadata that is missing, unreadable, for another name or for another image is derived again from the
 * image (its digest and manifest), keeping the usage, which belongs to the name, and the bindings
 * recorded for this image's digest, and dropping those recorded for another image and who deployed it
 * (a record for another image names that image's deployer; this one's is unknown). A store reads what it
 * holds into a `HarnessMeta`, asks `checkAgainstImage`, and writes back a repair in its own way: the
 * decision is made here once, the I/O stays in each store.
 */
import { Manifest, type ManifestData } from '@berm/manifest';
import { digestOf } from './checks.js';
import { emptyUsage } from './gate.js';
import type { HarnessMeta } from './store.js';

export type ImageCheck =
  /** The metadata describes the image: kept as read. */
  | { repaired: false; digest: string; meta: HarnessMeta }
  /**
   * Derived again from the image, for the store to write back; `manifest` is the image's, or null when it
   * does not read (the restore's checks refuse such an image, and a store keeps what it held).
   */
  | { repaired: true; digest: string; meta: HarnessMeta; manifest: ManifestData | null };

/**
 * Checks what a store read beside `image` (null when nothing readable) against it. `deployedAt` is when
 * the store says the image was written, the deploy time of a repaired record.
 */
export function checkAgainstImage(name: string, image: Uint8Array, stored: HarnessMeta | null, deployedAt: string): ImageCheck {
  const digest = digestOf(image);
  if (stored !== null && stored.name === name && stored.digest === digest) return { repaired: false, digest, meta: stored };
  const meta: HarnessMeta = {
    name,
    digest,
    deployed_at: deployedAt,
    last_used_at: stored?.last_used_at ?? null,
    used: stored?.used ?? emptyUsage(),
  };
  const kept = stored?.bindings?.[digest];
  if (kept !== undefined) meta.bindings = { [digest]: kept };
  return { repaired: true, digest, meta, manifest: manifestOf(image) };
}

function manifestOf(image: Uint8Array): ManifestData | null {
  try {
    return Manifest.fromImage(image).data;
  } catch {
    return null;
  }
}
