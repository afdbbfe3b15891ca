/**
 * Validators for a harness's tool arguments and event fields, compiled once per deploy.
 *
 * Tool arguments are checked on the main thread, before a task is queued, so invalid arguments cost no
 * worker at all. Nested `berm.call` arguments and `berm.emit` fields are checked inside the worker that
 * runs the guest, where the ajv instance does not exist: ajv's standalone mode turns the validators
 * compiled here into plain JS source, which a worker evaluates once per harness and caches. Schemas are
 * thus compiled once, here, and never again in any thread.
 */
import Ajv2020Module from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { JsonSchema, ManifestData } from '@berm/manifest';
import { RunnerError } from './errors.js';
import type { Check } from './schema-issues.js';

// ajv is CommonJS with a `default` member; under NodeNext the default import is the whole module object.
type AjvClass = typeof Ajv2020Module.default;
type AjvInstance = InstanceType<AjvClass>;
const Ajv2020: AjvClass = (Ajv2020Module as unknown as { default?: AjvClass }).default ?? (Ajv2020Module as unknown as AjvClass);
const standaloneCode: typeof standaloneModule.default =
  (standaloneModule as unknown as { default?: typeof standaloneModule.default }).default ??
  (standaloneModule as unknown as typeof standaloneModule.default);

/**
 * Options shared by every ajv instance here. `strict: false` because schemas come from images and may
 * carry keywords ajv does not know (`title`, `format: uint32`, ...). Formats are not asserted: in
 * JSON Schema 2020-12 `format` is an annotation unless a vocabulary says otherwise, and the Rust
 * macros write formats (`uint32`, `int64`) no validator knows. The first error is enough for a message.
 */
const AJV_OPTIONS = { strict: false, validateFormats: false, logger: false as const, allErrors: false } as const;

export interface HarnessValidators {
  /** Tool name to its arguments' validator. */
  tools: Map<string, Check>;
  /** Event name to its fields' validator. */
  events: Map<string, Check>;
  /** A CommonJS module exporting `t<i>` / `e<i>` for `manifest.tools[i]` / `manifest.events[i]`. */
  source: string;
}

/**
 * Schemas are 2020-12 by contract (spec §2), whatever `$schema` they name: older generators write the
 * draft-07 URI, which ajv's 2020 class cannot resolve. The root `$schema` is therefore dropped.
 */
function asDraft2020(schema: JsonSchema): JsonSchema {
  if (typeof schema !== 'object' || schema === null || !('$schema' in schema)) return schema;
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** Checks schemas against the 2020-12 meta-schema; one per process, as compiling the meta-schema is the costly part. */
let metaChecker: AjvInstance | undefined;

function checkSchema(schema: JsonSchema, where: string): void {
  metaChecker ??= new Ajv2020({ ...AJV_OPTIONS });
  if (!metaChecker.validateSchema(schema as object | boolean)) {
    const issue = metaChecker.errors?.[0];
    const at = issue?.instancePath ? ` at ${issue.instancePath}` : '';
    throw new RunnerError(
      'bad-schema',
      `${where} is not a valid JSON Schema${at}: ${issue?.message ?? 'rejected by the meta-schema'}`,
      where,
    );
  }
}

/** Compiles every tool's arguments and every event's fields; throws `RunnerError` `bad-schema` naming the first that fails. */
export function compileValidators(manifest: Pick<ManifestData, 'tools' | 'events'>): HarnessValidators {
  // One instance per harness: schema `$id`s from different images never meet, and an undeploy frees them all.
  const ajv = new Ajv2020({ ...AJV_OPTIONS, validateSchema: false, code: { source: true } });
  const exportNames: Record<string, string> = {};
  const tools = new Map<string, Check>();
  const events = new Map<string, Check>();
  const add = (key: string, schema: JsonSchema, where: string): Check => {
    const prepared = asDraft2020(schema);
    checkSchema(prepared, where);
    try {
      ajv.addSchema(prepared as object, key);
      const check = ajv.getSchema(key);
      if (check === undefined) throw new Error('the validator was not created');
      exportNames[key] = key;
      return check as unknown as Check;
    } catch (e) {
      throw new RunnerError('bad-schema', `${where} does not compile: ${(e as Error).message}`, where);
    }
  };
  manifest.tools.forEach((tool, i) => tools.set(tool.name, add(`t${i}`, tool.arguments, `the arguments of tool "${tool.name}"`)));
  manifest.events.forEach((event, i) => events.set(event.name, add(`e${i}`, event.fields, `the fields of event "${event.name}"`)));
  const source = Object.keys(exportNames).length === 0 ? '' : standaloneCode(ajv, exportNames);
  return { tools, events, source };
}
