import { createRequire } from 'node:module';

/**
 * The JSON Schema (2020-12) of a merged manifest, as the package ships it in
 * `schema/manifest.schema.json` (also exported as `@berm/manifest/schema.json`). Frozen, because
 * the validator is compiled from this very object.
 */
export const manifestSchema: Readonly<Record<string, unknown>> = deepFreeze(
  createRequire(import.meta.url)('../schema/manifest.schema.json') as Record<string, unknown>,
);

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
