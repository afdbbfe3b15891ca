import type { ManifestData } from '../types.js';

export type BreakCode = string;

export interface Break {
  code: BreakCode;
  tool?: string;
  event?: string;
  path: string;
  message: string;
}

export function breaks(_old: ManifestData, _next: ManifestData): Break[] {
  throw new Error('not implemented');
}
