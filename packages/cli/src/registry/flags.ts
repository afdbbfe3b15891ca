import * as Flags from '@oclif/core/flags';
import { formatSize } from '@berm/protocol';
import { IMAGE_BOUND } from './settings.js';

/** The flags of every command that may read an image from a registry; their values are read by settings.ts. */
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
