/**
 * A tool listed with an `outputSchema` promises `structuredContent` that matches it, and MCP clients
 * check that promise (the SDK's client fails the whole call when it is broken). So a result is checked
 * here, before it goes out, and one that does not match is answered as the tool's failure, naming
 * where it differs, rather than as a protocol fault in the client.
 */
import { BermdError } from '../errors.js';
import { ajv2020, schemaProblem, violation, type Check } from '../runtime/index.js';

/** Answers undefined when `value` matches, else a message naming the first place it does not. */
export type OutputCheck = (value: unknown) => string | undefined;

/** Formats are annotations in 2020-12 and the Rust macros write ones no validator knows (`uint32`); `strict: false` for the same reason. */
const AJV_OPTIONS = { strict: false, validateFormats: false, logger: false as const, allErrors: false } as const;

/**
 * The check of a tool's results against `schema`. A schema that is not one is refused at once; compiling
 * it is left to the first result checked when `lazy` (a restored harness, whose schema compiled at its
 * deploy), a compile that fails then answering that result as not matching.
 */
export function compileOutputCheck(schema: { [keyword: string]: unknown }, where: string, lazy = false): OutputCheck {
  const problem = schemaProblem(schema);
  if (problem !== undefined)
    throw new BermdError(
      'bad-schema',
      `${where} is not a schema bermd can check results against: schema is invalid: data${problem.at} ${problem.message}`,
      { where },
    );
  let check: Check | undefined;
  const compile = (): Check => {
    // One instance per schema: `$id`s from different images never meet, and an undeploy frees it. It does
    // not check the schema against the meta-schema itself (done above, by an instance the process shares).
    const ajv = new (ajv2020())({ ...AJV_OPTIONS, validateSchema: false });
    try {
      return ajv.compile(schema) as unknown as Check;
    } catch (e) {
      throw new BermdError('bad-schema', `${where} is not a schema bermd can check results against: ${(e as Error).message}`, { where });
    }
  };
  if (!lazy) check = compile();
  return (value) => {
    if (check === undefined) {
      try {
        check = compile();
      } catch (e) {
        return `${(e as Error).message} (deploy the image again to see why)`;
      }
    }
    return violation(check, 'result', value)?.message;
  };
}
