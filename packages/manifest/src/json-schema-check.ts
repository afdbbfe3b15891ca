/**
 * A schema checked against the JSON Schema 2020-12 meta-schema by the validator the build generates
 * beside the manifest's (scripts/build-validator.js), so that a reader (bermd checking the schemas of an
 * image it admits) neither loads nor runs ajv's compiler for the meta-schema.
 */
import { validateJsonSchema } from './manifest-validator.js';

/** Why `schema` is not a 2020-12 JSON Schema (where, and ajv's words), or undefined when it is one. */
export function jsonSchemaProblem(schema: unknown): { at: string; message: string } | undefined {
  if (validateJsonSchema(schema)) return undefined;
  const issue = validateJsonSchema.errors?.[0];
  return { at: issue?.instancePath ?? '', message: issue?.message ?? 'rejected by the meta-schema' };
}
