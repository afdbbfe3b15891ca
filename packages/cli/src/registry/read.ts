/**
 * An image argument read as a file or, when it is a registry reference, from the registry. What reads
 * registries (and undici under it) is loaded only for a reference: a file's `inspect --json` pays nothing.
 */
import type { Manifest } from '@berm/manifest';
import type { RegistrySettings } from './settings.js';

/** Cheap and conservative: anything `referenceOf` could take, and which is not read as a file first. */
export function mayBeReference(text: string): boolean {
  if (text.startsWith('oci://')) return true;
  const first = text.split('/')[0] ?? '';
  return text.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
}

/**
 * The manifest of `text`: read from the registry when it is a reference (`oci://…` always; a bare
 * `HOST/REPO:TAG` when no such file exists), else by `readFile`.
 */
export async function readImageOrReference(
  text: string,
  readFile: () => Promise<Manifest>,
  settings?: RegistrySettings,
): Promise<Manifest> {
  if (mayBeReference(text)) {
    const { referenceOf, readReferenceManifest } = await import('./images.js');
    const ref = await referenceOf(text);
    if (ref !== undefined) {
      const { registrySettings } = await import('./settings.js');
      return (await readReferenceManifest(ref, settings ?? registrySettings({}))).manifest;
    }
  }
  return readFile();
}
