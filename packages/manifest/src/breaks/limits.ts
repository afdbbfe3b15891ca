/**
 * How deep a comparison may go: pairs of schemas nested inside one another, and references
 * (`$ref`, `allOf`) followed to reach one schema. The manifest's JSON nesting is bounded when
 * it is read, but references can chain definitions far deeper than the stack would allow.
 * Real schemas stay within a few dozen levels.
 */
export const MAX_SCHEMA_DEPTH = 512;

/** Raised inside the walk; the manifest comparison turns it into a typed error naming the schema. */
export class SchemaTooDeep extends Error {
  constructor() {
    super(`schemas nest deeper than ${MAX_SCHEMA_DEPTH} levels through their references`);
    this.name = 'SchemaTooDeep';
  }
}
