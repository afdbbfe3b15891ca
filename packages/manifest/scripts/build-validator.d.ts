import type { Options } from 'ajv';

/** The manifest's JSON Schema, the generator's input. */
export const schemaFile: string;
/** Where the generated validator is written. */
export const outputFile: string;
/** The ajv options the validator is generated with; compiling at run time with them gives the same validator. */
export const AJV_OPTIONS: Readonly<Options>;
/** The source the build writes to `outputFile` for the schema as it is on disk now. */
export function validatorSource(): string;
