import { parseSize, SETTINGS } from '@berm/protocol';
import { CliError } from '../failure.js';

/** The daemon's own bound on an image: what a pull refuses past unless told otherwise, since bermd would refuse it anyway. */
export const IMAGE_BOUND = SETTINGS.find((row) => row.flag === 'max-image-size')!.default as number;

export interface RegistryFlagValues {
  'insecure-registry'?: string[];
  'max-image-size'?: string;
}

export interface RegistrySettings {
  insecure: string[];
  maxImageSize: number;
}

/** The registry flags' values (registry/flags.ts), a size outside the grammar being a usage error. */
export function registrySettings(flags: RegistryFlagValues): RegistrySettings {
  let maxImageSize = IMAGE_BOUND;
  const text = flags['max-image-size'];
  if (text !== undefined) {
    const size = parseSize(text);
    if (size === undefined || size <= 0) {
      throw new CliError('usage', `--max-image-size ${JSON.stringify(text)} is not a size: give bytes or a number with K, M or G (64M)`);
    }
    maxImageSize = size;
  }
  return { insecure: flags['insecure-registry'] ?? [], maxImageSize };
}
