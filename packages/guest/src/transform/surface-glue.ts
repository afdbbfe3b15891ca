/**
 * The dispatch written for the program's `@resource`, `@template` and `@complete` functions: one
 * `__berm_resource_read` and one `__berm_complete` (module.ts exports them as the ABI's
 * `berm_resource_read` and `berm_complete`), each comparing what bermd asks with the tags' texts and
 * calling the function they name. A function whose tag is malformed is left out here and reported by
 * surface.ts, which also drops the whole export when any of its functions cannot be rendered.
 */

/** The glue export module.ts wraps as `berm_resource_read`. */
export const READ_GLUE = '__berm_resource_read';
/** The glue export module.ts wraps as `berm_complete`. */
export const COMPLETE_GLUE = '__berm_complete';

/** What the dispatch needs of a declaration (tools.ts's ToolDecl). */
export interface SurfaceDecl {
  kind: string;
  local: string;
  paramType: string | null;
  tagText: string;
}

/** A `@complete TARGET ARGUMENT` tag read: TARGET is a prompt's name or a template's path. */
export interface CompleteTag {
  target: string;
  argument: string;
  /** True when TARGET names a prompt (a manifest name), false for a template's path. */
  prompt: boolean;
}

const MANIFEST_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function readCompleteTag(text: string): CompleteTag | undefined {
  const words = text.split(/\s+/).filter((w) => w !== '');
  if (words.length !== 2) return undefined;
  return { target: words[0]!, argument: words[1]!, prompt: MANIFEST_NAME.test(words[0]!) };
}

/** A `@resource PATH` or `@template PATH` tag's path: its one word, or undefined. */
export function readPathTag(text: string): string | undefined {
  const words = text.split(/\s+/).filter((w) => w !== '');
  return words.length === 1 ? words[0] : undefined;
}

function literal(text: string): string {
  return JSON.stringify(text);
}

export function surfaceGlue(decls: readonly SurfaceDecl[]): string[] {
  const reads: string[] = [];
  for (const decl of decls) {
    if (decl.kind !== 'resource' && decl.kind !== 'template') continue;
    const path = readPathTag(decl.tagText);
    if (path === undefined) continue;
    if (decl.kind === 'resource') {
      reads.push(`  if (request.template == null && request.path == ${literal(path)}) return __berm_read_answer(${decl.local}());`);
    } else {
      const args = decl.paramType === null ? '' : `__berm_read_variables<${decl.paramType}>(request)`;
      reads.push(`  if (request.template == ${literal(path)}) return __berm_read_answer(${decl.local}(${args}));`);
    }
  }
  const completes: string[] = [];
  for (const decl of decls) {
    if (decl.kind !== 'complete') continue;
    const tag = readCompleteTag(decl.tagText);
    if (tag === undefined) continue;
    const ref = tag.prompt
      ? `request.ref.type == "prompt" && request.ref.name == ${literal(tag.target)}`
      : `request.ref.type == "resource" && request.ref.path == ${literal(tag.target)}`;
    completes.push(
      `  if (${ref} && request.argument.name == ${literal(tag.argument)}) return __berm_complete_answer(${decl.local}(request.argument.value));`,
    );
  }
  const lines: string[] = [];
  if (reads.length > 0 || completes.length > 0) {
    lines.push(
      'import { __berm_read_request, __berm_read_variables, __berm_read_answer, __berm_read_unknown, __berm_complete_request, __berm_complete_answer } from "@berm/guest";',
    );
  }
  if (reads.length > 0) {
    lines.push(
      `export function ${READ_GLUE}(ptr: usize, len: i32): i64 {`,
      '  const request = __berm_read_request(ptr, len);',
      ...reads,
      '  return __berm_read_unknown(request);',
      '}',
    );
  }
  if (completes.length > 0) {
    lines.push(
      `export function ${COMPLETE_GLUE}(ptr: usize, len: i32): i64 {`,
      '  const request = __berm_complete_request(ptr, len);',
      ...completes,
      '  return __berm_complete_answer(new Array<string>(0));',
      '}',
    );
  }
  return lines;
}
