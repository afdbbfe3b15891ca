/**
 * ajv's 2020-12 class and its standalone code generator, loaded on first use rather than when the runtime
 * is imported: synchronously (a CommonJS require, which ajv is), since compiling is. An embedded run
 * (`crab run`) starts its worker when its runtime is made, before any schema is compiled, so ajv's files
 * are read while the worker starts rather than before it.
 *
 * Both come from ajv-bundle.cjs, the two as one file the build writes beside this module
 * (scripts/bundle.js), loaded with its code cache (code-cache.ts): requiring ajv's own ninety files, each
 * resolved, read and compiled on its own, cost a run several times what the one file does. Without that
 * file (a compile alone, `tsc -b`), from ajv itself. Both from the same place, since the generator works
 * on the class's own compiled code.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type Ajv2020Module from 'ajv/dist/2020.js';
import type standaloneModule from 'ajv/dist/standalone/index.js';
import { requireBundle } from './code-cache.js';

export type AjvClass = typeof Ajv2020Module.default;
export type AjvInstance = InstanceType<AjvClass>;
type StandaloneCode = typeof standaloneModule.default;

const require = createRequire(import.meta.url);
let loaded: { ajvClass: AjvClass; standalone: StandaloneCode } | undefined;

/** ajv is CommonJS with a `default` member, which is what its ES import gives too. */
function defaultOf<T>(module: unknown): T {
  return (module as { default?: T }).default ?? (module as T);
}

function ajv(): { ajvClass: AjvClass; standalone: StandaloneCode } {
  if (loaded !== undefined) return loaded;
  const bundle = fileURLToPath(new URL('./ajv-bundle.cjs', import.meta.url));
  const modules = existsSync(bundle)
    ? (requireBundle(bundle) as { Ajv2020: unknown; standalone: unknown })
    : { Ajv2020: require('ajv/dist/2020.js'), standalone: require('ajv/dist/standalone/index.js') };
  loaded = { ajvClass: defaultOf<AjvClass>(modules.Ajv2020), standalone: defaultOf<StandaloneCode>(modules.standalone) };
  return loaded;
}

/** ajv's class for JSON Schema 2020-12. */
export function ajv2020(): AjvClass {
  return ajv().ajvClass;
}

/** ajv's standalone mode: compiled validators as the source of a CommonJS module. */
export function standaloneCode(): StandaloneCode {
  return ajv().standalone;
}
