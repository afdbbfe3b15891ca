export { Manifest } from './manifest.js';
export { ManifestError, isManifestError, type ManifestErrorCode, type ErrorLocation } from './errors.js';
export { breaks, BREAK_CODES, isBreakCode, type Break, type BreakCode } from './breaks/index.js';
export { sameJson } from './breaks/json.js';
export { writeManifestSection, manifestRecords, customSection, SECTION_NAME, type WriteOptions } from './writer.js';
export {
  ABI_VERSION,
  EFFECT_RETRIES,
  CONTENT_KINDS,
  type ContentKind,
  type Effect,
  type EffectRetry,
  type JsonSchema,
  type ToolSpec,
  type EventSpec,
  type Deps,
  type ManifestData,
  type PromptSpec,
  type PromptArgumentSpec,
  type ResourceSpec,
  type ResourceTemplateSpec,
} from './types.js';
export { readManifestFile, readManifestSource } from './file.js';
export type { ByteSource } from './source.js';
export { standardSchema, STANDARD_FORMATS } from './standard-schema.js';
export { manifestSchema } from './schema.js';
export { escapeRawControls } from './json-text.js';
export { readU32, readU64, encodeU32 } from './leb128.js';
export { moduleSections, sectionFrame, customSectionName, MAX_SECTION_HEADER, type SectionFrame } from './wasm-sections.js';
export { effectOf, checkEffects, reachesOutside, undeclaredEffects, OUTBOUND_SYSCALLS } from './effects.js';
export { checkPrompts } from './prompts.js';
export { jsonSchemaProblem } from './json-schema-check.js';
export {
  checkResources,
  isResourcePath,
  matchTemplate,
  parseTemplate,
  templateVariables,
  USAGE_PATH,
  type TemplatePart,
} from './resources.js';
