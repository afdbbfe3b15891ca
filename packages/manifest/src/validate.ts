import type { ManifestData } from './types.js';

export function validateManifest(_value: unknown): ManifestData {
  throw new Error('not implemented');
}
