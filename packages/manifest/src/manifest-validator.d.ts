// The validator of schema/manifest.schema.json, generated into dist/manifest-validator.js by
// scripts/build-validator.js (ajv standalone code) so that reading an image loads no ajv compiler.

import type { ErrorObject } from 'ajv';

/** An error as ajv reports it: the first one is all a failed validation keeps (allErrors is off). */
export type ValidatorError = ErrorObject;

/** True when `data` matches the schema; otherwise false, with the error left in `validate.errors`. */
export declare const validate: {
  (data: unknown): boolean;
  errors?: ValidatorError[] | null;
};

/** The JSON Schema 2020-12 meta-schema's validator: true when `data` is such a schema, as `validate` reports otherwise. */
export declare const validateJsonSchema: {
  (data: unknown): boolean;
  errors?: ValidatorError[] | null;
};
