/**
 * What an embedder of bermd needs: start a daemon (from the command line, or from options in a
 * program), its options, and its errors. Everything else is inside the rooms (src/*\/index.ts) and is
 * not a promise of this package; its tests reach it by path.
 */
export { main } from './main.js';
export { createDaemon, type Daemon, type DaemonConfig } from './daemon.js';
export {
  parseOptions,
  defaultStateDir,
  OptionsError,
  DEFAULT_PORT,
  DEFAULT_HOST,
  DEFAULT_MAX_IMAGE_SIZE,
  type DaemonOptions,
} from './options.js';
export { DEFAULT_LIMITS, DEFAULT_MAX_CALL_DEPTH } from './limits.js';
export { BermdError, isBermdError, ERROR_STATUS, type BermdErrorCode } from './errors.js';
export { Secrets, SecretsFileError } from './egress/index.js';
