/**
 * Edits to the compiled module (Binaryen), before it is validated and optimised:
 *
 * - Each tool export becomes `berm_tool_T(ptr, len) -> i64`: a function that calls the glue inside a
 *   wasm `try`, and on the abort tag answers `{"error": message}` after restoring the shadow stack
 *   pointer the unwound frames left behind (the incremental collector scans that stack, so a pointer
 *   left low would leak the stack a little on every failed call).
 * - `__berm_unwind`, where ~lib/berm_abort lands, throws that tag; so no abort ever traps or imports.
 * - So do each prompt's export and `berm_resource_read` / `berm_complete` when written.
 * - Every other export goes: the module exports `memory`, `berm_alloc` and the ABI's functions, nothing else.
 *
 * Wasm exception handling (the `try`/`catch` instructions) runs in V8 since 9.5, so on every Node
 * berm supports; it is the one feature a berm build adds to AssemblyScript's defaults.
 */

import { ALLOC_EXPORT, COMPLETE_EXPORT, promptExport, RESOURCE_READ_EXPORT, toolExport } from '@berm/protocol';
import { COMPLETE_GLUE, READ_GLUE } from './surface-glue.js';
import { ABORT_RESULT, glueExport, promptGlueExport } from './tools.js';

/** The part of binaryen.js used here; the compiler hands the transform its own instance. */
// biome-ignore lint/suspicious/noExplicitAny: the compiler's binaryen instance comes untyped through the transform API
export type Binaryen = any;
// biome-ignore lint/suspicious/noExplicitAny: as above
export type BinaryenModule = any;

export const ABORT_TAG = 'berm:abort';
const UNWIND = '~lib/berm_abort/__berm_unwind';
const STACK_POINTER = '~lib/memory/__stack_pointer';
/** The ABI's export of the memory (docs/contract.md §4). */
const MEMORY_EXPORT = 'memory';

export interface ModuleImport {
  module: string;
  field: string;
  /** The function's internal name, which tells what declared it. */
  internal: string;
}

export function exportsOf(b: Binaryen, module: BinaryenModule): Map<string, { kind: number; value: string }> {
  const out = new Map<string, { kind: number; value: string }>();
  for (let i = 0; i < module.getNumExports(); i++) {
    const info = b.getExportInfo(module.getExportByIndex(i));
    out.set(info.name, { kind: info.kind, value: info.value });
  }
  return out;
}

export function functionImports(b: Binaryen, module: BinaryenModule): ModuleImport[] {
  const out: ModuleImport[] = [];
  for (let i = 0; i < module.getNumFunctions(); i++) {
    const info = b.getFunctionInfo(module.getFunctionByIndex(i));
    if (info.module) out.push({ module: info.module, field: info.base, internal: info.name });
  }
  return out;
}

/**
 * Rewrites the exports as the ABI wants them. `tools` are the tool names whose glue was compiled;
 * returns the names whose glue export was not found (a bug, reported by the caller).
 */
export function shapeExports(
  b: Binaryen,
  module: BinaryenModule,
  tools: readonly string[],
  prompts: readonly string[] = [],
  surface: { read: boolean; complete: boolean } = { read: false, complete: false },
): string[] {
  const exports = exportsOf(b, module);
  const abortResult = exports.get(ABORT_RESULT)?.value;
  const canAbort = module.getFunction(UNWIND) !== 0;
  const hasStack = module.getGlobal(STACK_POINTER) !== 0;
  if (canAbort) {
    module.setFeatures(module.getFeatures() | b.Features.ExceptionHandling);
    module.addTag(ABORT_TAG, b.none, b.none);
    b.Function.setBody(module.getFunction(UNWIND), module.throw(ABORT_TAG, []));
  }
  const missing: string[] = [];
  const params = b.createType([b.i32, b.i32]);
  const wrapped: Array<{ name: string; glue: string; abi: string }> = [
    ...tools.map((tool) => ({ name: tool, glue: glueExport(tool), abi: toolExport(tool) })),
    ...prompts.map((prompt) => ({ name: prompt, glue: promptGlueExport(prompt), abi: promptExport(prompt) })),
    ...(surface.read ? [{ name: RESOURCE_READ_EXPORT, glue: READ_GLUE, abi: RESOURCE_READ_EXPORT }] : []),
    ...(surface.complete ? [{ name: COMPLETE_EXPORT, glue: COMPLETE_GLUE, abi: COMPLETE_EXPORT }] : []),
  ];
  for (const { name: tool, glue: glueName, abi } of wrapped) {
    const glue = exports.get(glueName)?.value;
    if (glue === undefined) {
      missing.push(tool);
      continue;
    }
    const run = module.call(glue, [module.local.get(0, b.i32), module.local.get(1, b.i32)], b.i64);
    let body = run;
    const vars: number[] = [];
    if (canAbort && abortResult !== undefined) {
      const recover = [module.call(abortResult, [], b.i64)];
      if (hasStack) {
        vars.push(b.i32);
        recover.unshift(module.global.set(STACK_POINTER, module.local.get(2, b.i32)));
      }
      const guarded = module.try('', run, [ABORT_TAG], [module.block(null, recover, b.i64)]);
      body = hasStack ? module.block(null, [module.local.set(2, module.global.get(STACK_POINTER, b.i32)), guarded], b.i64) : guarded;
    }
    const name = `berm:${abi}`;
    module.addFunction(name, params, b.i64, vars, body);
    module.addFunctionExport(name, abi);
  }
  const keep = new Set([MEMORY_EXPORT, ALLOC_EXPORT, ...wrapped.map((w) => w.abi)]);
  for (const name of exportsOf(b, module).keys()) {
    if (!keep.has(name)) module.removeExport(name);
  }
  return missing;
}
