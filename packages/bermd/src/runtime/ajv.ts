/**
 * ajv's 2020-12 class and its standalone code generator, loaded on first use rather than when the runtime
 * is imported: synchronously (a CommonJS require, which ajv is), since compiling is. An embedded run
 * (`crab run`) starts its worker when its runtime is made, before any schema is compiled, so ajv's files
 * are read while the worker starts rather than before it.
 */
import { createRequire } from 'node:module';
import type Ajv2020Module from 'ajv/dist/2020.js';
import type standaloneModule from 'ajv/dist/standalone/index.js';

export type AjvClass = typeof Ajv2020Module.default;
export type AjvInstance = InstanceType<AjvClass>;
type StandaloneCode = typeof standaloneModule.default;

const require = createRequire(import.meta.url);
let ajvClass: AjvClass | undefined;
let standalone: StandaloneCode | undefined;

/** ajv is CommonJS with a `default` member, which is what its ES import gives too. */
function defaultOf<T>(loaded: unknown): T {
  return (loaded as { default?: T }).default ?? (loaded as T);
}

/** ajv's class for JSON Schema 2020-12. */
export function ajv2020(): AjvClass {
  ajvClass ??= defaultOf<AjvClass>(require('ajv/dist/2020.js'));
  return ajvClass;
}

/** ajv's standalone mode: compiled validators as the source of a CommonJS module. */
export function standaloneCode(): StandaloneCode {
  standalone ??= defaultOf<StandaloneCode>(require('ajv/dist/standalone/index.js'));
  return standalone;
}
