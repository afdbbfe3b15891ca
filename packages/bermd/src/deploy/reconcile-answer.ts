/**
 * A write with `retry: "reconcile"` is retried, after an abandoned attempt, by asking its reconcile tool
 * `{"done": boolean, "result"?: ...}` (docs/contract.md §6). A reconcile tool whose declared `returns`
 * cannot say that would make every such retry `outcome-unknown`, which is found out only after a crash; so
 * a deploy refuses it at once (422 `effect-reconcile-returns`).
 *
 * The check reads the schema's top level only, where what it says of `done` is plain: an object, with
 * room for a `done` that may be true and may be false. What a schema says only through `anyOf`, `oneOf`,
 * `if`, `$ref` and the like is let through: refusing a schema the check cannot read would refuse images
 * that are right, and the runtime still answers `outcome-unknown` for any answer it cannot read.
 */
import { createRequire } from 'node:module';
import type Ajv2020Module from 'ajv/dist/2020.js';
import { effectOf, type JsonSchema, type Manifest } from '@berm/manifest';
import { BermdError } from '../errors.js';

type AjvClass = typeof Ajv2020Module.default;
// Loaded when a reconcile tool is first checked, not with admission: most images have none, and an
// embedded run (`crab run`) reads ajv while its worker starts (runtime/ajv.ts says why).
const require = createRequire(import.meta.url);

let ajv: InstanceType<AjvClass> | undefined;

/** Why `returns` cannot say `{"done": boolean, ...}`, or undefined when it can (or when the check cannot tell). */
export function reconcileReturnsProblem(returns: JsonSchema): string | undefined {
  if (returns === false) return 'it is the schema false, which no answer matches';
  if (typeof returns !== 'object') return undefined;
  const schema = returns as Record<string, unknown>;
  const type = schema.type;
  if (type !== undefined && !(type === 'object' || (Array.isArray(type) && type.includes('object'))))
    return `its type is ${JSON.stringify(type)}, not an object`;
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  const done = properties?.done;
  if (done === undefined) {
    if (schema.additionalProperties === false)
      return 'it allows no member "done" (additionalProperties is false and "done" is not among its properties)';
    return undefined;
  }
  if (ajv === undefined) {
    // ajv is CommonJS with a `default` member.
    const loaded = require('ajv/dist/2020.js') as { default?: AjvClass };
    const Ajv2020 = loaded.default ?? (loaded as unknown as AjvClass);
    ajv = new Ajv2020({ strict: false, validateFormats: false, logger: false, allErrors: false });
  }
  let accepts: (value: boolean) => boolean;
  try {
    const check = ajv.compile(done as object | boolean);
    accepts = (value) => check(value) === true;
  } catch {
    // A schema that does not compile is the schema checks' to refuse, with their own words.
    return undefined;
  }
  const refused = [true, false].filter((v) => !accepts(v));
  if (refused.length === 0) return undefined;
  return `its member "done" cannot be ${refused.join(' or ')}`;
}

/** Refuses (422 `effect-reconcile-returns`) an image whose reconcile tool of a `retry: "reconcile"` write declares a `returns` that cannot answer it. */
export function refuseUnreadableReconcile(manifest: Manifest): void {
  const tools = manifest.data.tools;
  for (const write of tools) {
    const effect = effectOf(write);
    if (effect?.kind !== 'external_write' || effect.retry !== 'reconcile' || effect.reconcile === undefined) continue;
    const reconcile = tools.find((t) => t.name === effect.reconcile);
    if (reconcile?.returns === undefined) continue;
    const problem = reconcileReturnsProblem(reconcile.returns);
    if (problem === undefined) continue;
    throw new BermdError(
      'effect-reconcile-returns',
      `tool "${reconcile.name}" reconciles "${write.name}" (retry: reconcile), so bermd asks it {"done": boolean, "result"?: the write's answer} ` +
        `after an attempt that never finished, but its returns cannot say that: ${problem}. Declare its returns as an object whose "done" ` +
        'is a boolean (and whose "result" is what the write answers), or leave returns undeclared',
      { tool: reconcile.name, write: write.name },
    );
  }
}
