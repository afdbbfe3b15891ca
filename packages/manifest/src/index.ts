export { Manifest } from './manifest.js';
export { ManifestError, isManifestError, type ManifestErrorCode, type ErrorLocation } from './errors.js';
export { breaks, BREAK_CODES, isBreakCode, type Break, type BreakCode } from './breaks/index.js';
export { writeManifestSection, manifestRecords, customSection, SECTION_NAME, type WriteOptions } from './writer.js';
export { ABI_VERSION, type JsonSchema, type ToolSpec, type EventSpec, type Deps, type ManifestData } from './types.js';
export { readManifestFile } from './file.js';
export { manifestSchema } from './schema.js';
