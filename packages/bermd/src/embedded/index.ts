export { EmbeddedRuntime, CallRefused, type EmbeddedOptions, type EmbeddedImage } from './runtime.js';
export { load, type ImageSource, type LoadOptions, type LoadedHarness, type CallAnswer } from './testing.js';
export { Secrets, SecretsFileError } from '../egress/index.js';
export { BermdError, isBermdError } from '../errors.js';
export { DEFAULT_LIMITS } from '../limits.js';
export { startWorkers, type StartedWorkers } from '../runtime/light.js';
