/**
 * Validators for a harness's tool arguments and event fields, compiled once per deploy (or, for a
 * harness restored, once on its first call).
 *
 * Tool arguments are checked on the main thread, before a task is queued, so invalid arguments cost no
 * worker at all. Nested `berm.call` arguments and `berm.emit` fields are checked inside the worker that
 * runs the guest, where the ajv instance does not exist: ajv's standalone mode turns the validators
 * compiled here into plain JS source, which a worker evaluates once per harness and caches. Schemas are
 * thus compiled once, here, and never again in any thread.
 */
import { type JsonSchema, jsonSchemaProblem, type ManifestData } from '@berm/manifest';
import { type AjvInstance, ajv2020, standaloneCode } from './ajv.js';
import { RunnerError } from './errors.js';
import type { Check } from './schema-issues.js';

/**
 * Options shared by every ajv instance here. `strict: false` because schemas come from images and may
 * carry keywords ajv does not know (`title`, `format: uint32`, ...). Formats are not asserted: in
 * JSON Schema 2020-12 `format` is an annotation unless a vocabulary says otherwise, and the Rust
 * macros write formats (`uint32`, `int64`) no validator knows. The first error is enough for a message.
 */
const AJV_OPTIONS = { strict: false, validateFormats: false, logger: false as const, allErrors: false } as const;

/**
 * A harness's validators. Each schema is checked against the meta-schema when they are made (a schema
 * that is not one refuses the harness there); compiling them is ajv's code generation, most of what a
 * harness costs to restore, so a restored harness compiles on the first call that needs them.
 */
export interface HarnessValidators {
  /** Tool `name`'s arguments' validator; undefined when the harness has no such tool. Throws `RunnerError` `bad-schema` when they do not compile. */
  tool(name: string): Check | undefined;
  /** Event `name`'s fields' validator; undefined when the harness has no such event. Throws as `tool` does. */
  event(name: string): Check | undefined;
  /** A CommonJS module exporting `t<i>` / `e<i>` for `manifest.tools[i]` / `manifest.events[i]`. Throws as `tool` does. */
  source(): string;
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

/** The 2020-12 meta-schema's URI, which ajv's `validateSchema` checks a schema against when it names no other. */
const META_SCHEMA = 'https://json-schema.org/draft/2020-12/schema';

/** Checks schemas naming another `$schema`; one per process, as compiling the meta-schema is the costly part. */
let metaChecker: AjvInstance | undefined;

/**
 * Why `schema` is not a valid 2020-12 JSON Schema, or undefined when it is. Every ajv instance that
 * compiles schemas from images is made with `validateSchema: false` and asks this first: an instance that
 * validates its own schemas compiles the meta-schema once more, which is most of what a compile costs.
 * A schema naming no `$schema`, or 2020-12's, is checked by the meta-schema's validator the manifest
 * library generates at build (compiling it here cost an embedded run more than its call), which answers
 * as ajv's `validateSchema` does (test/schema-problem.test.ts holds them together); one naming another
 * goes to ajv, as before, which refuses a meta-schema it does not know.
 */
export function schemaProblem(schema: unknown): { at: string; message: string } | undefined {
  const named = typeof schema === 'object' && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined;
  if (!named || named === META_SCHEMA) return jsonSchemaProblem(schema);
  metaChecker ??= new (ajv2020())({ ...AJV_OPTIONS });
  if (metaChecker.validateSchema(schema as object | boolean)) return undefined;
  const issue = metaChecker.errors?.[0];
  return { at: issue?.instancePath ?? '', message: issue?.message ?? 'rejected by the meta-schema' };
}

function checkSchema(schema: JsonSchema, where: string): void {
  const problem = schemaProblem(schema);
  if (problem === undefined) return;
  const at = problem.at ? ` at ${problem.at}` : '';
  throw new RunnerError('bad-schema', `${where} is not a valid JSON Schema${at}: ${problem.message}`, where);
}

interface Schema {
  key: string;
  name: string;
  schema: JsonSchema;
  where: string;
}

interface Compiled {
  ajv: AjvInstance;
  tools: Map<string, Check>;
  events: Map<string, Check>;
}

class Validators implements HarnessValidators {
  private compiled?: Compiled;
  private standalone?: string;

  constructor(private readonly schemas: readonly Schema[]) {}

  tool(name: string): Check | undefined {
    return this.compile().tools.get(name);
  }

  event(name: string): Check | undefined {
    return this.compile().events.get(name);
  }

  source(): string {
    if (this.standalone !== undefined) return this.standalone;
    const { ajv } = this.compile();
    const exportNames = Object.fromEntries(this.schemas.map(({ key }) => [key, key]));
    this.standalone = this.schemas.length === 0 ? '' : standaloneCode()(ajv, exportNames);
    return this.standalone;
  }

  /** Compiles every schema of the harness, once: a harness has few, and a call needs its tool's and the standalone module all of them. */
  compile(): Compiled {
    if (this.compiled !== undefined) return this.compiled;
    // One instance per harness: schema `$id`s from different images never meet, and an undeploy frees them all.
    const ajv = new (ajv2020())({ ...AJV_OPTIONS, validateSchema: false, code: { source: true } });
    const tools = new Map<string, Check>();
    const events = new Map<string, Check>();
    for (const { key, name, schema, where } of this.schemas) {
      try {
        ajv.addSchema(schema as object, key);
        const check = ajv.getSchema(key);
        if (check === undefined) throw new Error('the validator was not created');
        (key.startsWith('t') ? tools : events).set(name, check as unknown as Check);
      } catch (e) {
        throw new RunnerError('bad-schema', `${where} does not compile: ${(e as Error).message}`, where);
      }
    }
    this.compiled = { ajv, tools, events };
    return this.compiled;
  }
}

/**
 * The validators of every tool's arguments and every event's fields; throws `RunnerError` `bad-schema`
 * naming the first schema that is not one, or (unless `lazy`) that does not compile. `lazy`: compiled on
 * first use, for a harness whose schemas compiled when it was deployed (a restore, a change followed from
 * another process).
 */
export function compileValidators(manifest: Pick<ManifestData, 'tools' | 'events'>, lazy = false): HarnessValidators {
  const schemas: Schema[] = [
    ...manifest.tools.map((tool, i) => ({
      key: `t${i}`,
      name: tool.name,
      schema: tool.arguments,
      where: `the arguments of tool "${tool.name}"`,
    })),
    ...manifest.events.map((event, i) => ({
      key: `e${i}`,
      name: event.name,
      schema: event.fields,
      where: `the fields of event "${event.name}"`,
    })),
  ].map((s) => ({ ...s, schema: asDraft2020(s.schema) }));
  for (const { schema, where } of schemas) checkSchema(schema, where);
  const validators = new Validators(schemas);
  if (!lazy) validators.compile();
  return validators;
}
