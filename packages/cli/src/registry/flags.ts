import * as Flags from '@oclif/core/flags';
import { formatSize, parseSize, SETTINGS } from '@berm/protocol';
import { CliError } from '../failure.js';

/** The daemon's own bound on an image: what a pull refuses past unless told otherwise, since bermd would refuse it anyway. */
const IMAGE_BOUND = SETTINGS.find((row) => row.flag === 'max-image-size')!.default as number;

/** The flags of every command that may read an image from a registry. */
export const registryFlags = {
  'insecure-registry': Flags.string({
    description: 'a registry host spoken to over plain HTTP (repeatable); loopback hosts always are',
    helpValue: 'HOST',
    multiple: true,
  }),
  'max-image-size': Flags.string({
    description: `the largest image layer read from a registry, refused before it is downloaded [default: ${formatSize(IMAGE_BOUND)}, the daemon's image bound]`,
    helpValue: 'SIZE',
  }),
};

export interface RegistryFlagValues {
  'insecure-registry'?: string[];
  'max-image-size'?: string;
}

export interface RegistrySettings {
  insecure: string[];
  maxImageSize: number;
}

/** The flags' values, a size outside the grammar being a usage error (oclif reports it). */
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
