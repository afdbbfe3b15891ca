/**
 * A tool listed with an `outputSchema` promises `structuredContent` that matches it, and MCP clients
 * check that promise (the SDK's client fails the whole call when it is broken). So a result is checked
 * here, before it goes out, and one that does not match is answered as the tool's failure, naming
 * where it differs, rather than as a protocol fault in the client.
 */
import Ajv2020Module from 'ajv/dist/2020.js';
import { BermdError } from '../errors.js';
import { violation, type Check } from '../runtime/index.js';

type AjvClass = typeof Ajv2020Module.default;
// ajv is CommonJS with a `default` member; under NodeNext the default import is the whole module object.
const Ajv2020: AjvClass = (Ajv2020Module as unknown as { default?: AjvClass }).default ?? (Ajv2020Module as unknown as AjvClass);

/** Answers undefined when `value` matches, else a message naming the first place it does not. */
export type OutputCheck = (value: unknown) => string | undefined;

/** Formats are annotations in 2020-12 and the Rust macros write ones no validator knows (`uint32`); `strict: false` for the same reason. */
const AJV_OPTIONS = { strict: false, validateFormats: false, logger: false as const, allErrors: false } as const;

export function compileOutputCheck(schema: { [keyword: string]: unknown }, where: string): OutputCheck {
  // One instance per schema: `$id`s from different images never meet, and an undeploy frees it.
  const ajv = new Ajv2020({ ...AJV_OPTIONS });
  let check: Check;
  try {
    check = ajv.compile(schema) as unknown as Check;
  } catch (e) {
    throw new BermdError('bad-schema', `${where} is not a schema bermd can check results against: ${(e as Error).message}`, { where });
  }
  return (value) => violation(check, 'result', value)?.message;
}
