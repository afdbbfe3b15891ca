/**
 * Finding the tools in the entry's syntax tree and writing their glue. The glue is AssemblyScript
 * appended to the entry's own text and parsed with it, so the names a tool's signature uses resolve
 * exactly as in the tool's file, whether declared there or imported; appended at the end, it moves
 * no line or column of the harness's code. Each tool `T` gets
 *
 *     export function __berm_tool_T(ptr: usize, len: i32): i64 { return __berm_ok(T(__berm_args<Args>(ptr, len))); }
 *
 * which the transform later wraps, under the export name `berm_tool_T`, in the handler that turns an
 * abort into `{"error": ...}`.
 */
import { CommonFlags, NodeKind } from 'assemblyscript';
import type { ExportStatement, FunctionDeclaration, NamedTypeNode, Node, Source } from 'assemblyscript';
import { ALLOC_EXPORT } from '@berm/protocol';
import { docBefore } from './docs.js';
import { surfaceGlue } from './surface-glue.js';

/** Tool names as the manifest allows them (docs/contract.md §2). */
export const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The export of tool `name`'s glue, which module.ts wraps and exports as the ABI's `berm_tool_<name>`. */
export function glueExport(name: string): string {
  return `__berm_tool_${name}`;
}

/** The export of prompt `name`'s glue, which module.ts wraps and exports as the ABI's `berm_prompt_<name>`. */
export function promptGlueExport(name: string): string {
  return `__berm_prompt_${name}`;
}

/** The guest library's export that answers `{"error": message}` for the abort that unwound a call. */
export const ABORT_RESULT = '__berm_abort_result';

export interface ToolDecl {
  /** The tool's name: the function's, or the name it is exported as. */
  name: string;
  decl: FunctionDeclaration;
  /** The function's own name, which the glue calls. */
  local: string;
  /** The parameter's type as written, or null for a tool that takes none. */
  paramType: string | null;
  returnsVoid: boolean;
  /** What the function is: a tool, or (by its tag) a prompt, a resource, a template or a completion. */
  kind: DeclKind;
  /** The tag's text: a resource's or template's path, a completion's `TARGET ARGUMENT`. */
  tagText: string;
}

export type DeclKind = 'tool' | 'prompt' | 'resource' | 'template' | 'complete';

/** The tags that make an exported function something other than a tool. */
const KIND_TAGS = ['prompt', 'resource', 'template', 'complete'] as const;

export interface ToolProblem {
  message: string;
  node: Node;
}

function text(source: Source, node: { range: { start: number; end: number } }): string {
  return source.text.slice(node.range.start, node.range.end);
}

/**
 * The exported functions of the entry, as tools: those declared with `export`, and local functions
 * named in an `export { f }` or `export { f as g }` (the tool is then `g`). A re-export from another
 * file is a problem: the glue, in this file, could not call it, and dropping it silently would lose a
 * tool its author meant.
 */
export function findTools(entry: Source, problems: ToolProblem[]): ToolDecl[] {
  const tools: ToolDecl[] = [];
  const functions = new Map<string, FunctionDeclaration>();
  for (const statement of entry.statements) {
    if (statement.kind === NodeKind.FunctionDeclaration)
      functions.set((statement as FunctionDeclaration).name.text, statement as FunctionDeclaration);
  }
  for (const statement of entry.statements) {
    if (statement.kind === NodeKind.FunctionDeclaration) {
      const decl = statement as FunctionDeclaration;
      if (decl.flags & CommonFlags.Export && !(decl.flags & CommonFlags.Ambient)) addTool(decl.name.text, decl, decl, tools, problems);
    } else if (statement.kind === NodeKind.Export) {
      const exp = statement as ExportStatement;
      if (exp.path !== null) {
        problems.push({
          node: exp.path,
          message: `assembly/index.ts re-exports from ${exp.path.value}; a tool must be a function of assembly/index.ts itself (declare it there, or import it and export a function that calls it)`,
        });
        continue;
      }
      for (const member of exp.members ?? []) {
        const decl = functions.get(member.localName.text);
        if (decl !== undefined) addTool(member.exportedName.text, decl, member, tools, problems);
      }
    }
  }
  return tools;
}

function addTool(name: string, decl: FunctionDeclaration, at: Node, tools: ToolDecl[], problems: ToolProblem[]): void {
  const params = decl.signature.parameters;
  if (!TOOL_NAME.test(name)) {
    problems.push({ node: at, message: `tool name ${name} is not a manifest name (letters, digits and _, not starting with a digit)` });
    return;
  }
  if (decl.typeParameters !== null && decl.typeParameters.length > 0) {
    problems.push({ node: at, message: `tool ${name} is generic; a tool's types must be known to render its schema` });
    return;
  }
  if (params.length > 1) {
    problems.push({
      node: at,
      message: `tool ${name} takes ${params.length} parameters; a tool takes none, or one @json class whose fields are its arguments`,
    });
    return;
  }
  const returnType = decl.signature.returnType;
  if (returnType === null || returnType.range.start === returnType.range.end) {
    problems.push({ node: at, message: `tool ${name} must declare its return type (void when it returns nothing)` });
    return;
  }
  const returnsVoid = returnType.kind === NodeKind.NamedType && (returnType as NamedTypeNode).name.identifier.text === 'void';
  const source = decl.range.source;
  const tags = docBefore(source.text, decl.range.start).tags;
  const kinds = KIND_TAGS.filter((tag) => tags.has(tag));
  if (kinds.length > 1) {
    problems.push({ node: at, message: `${name} is tagged ${kinds.map((k) => `@${k}`).join(' and ')}; a function is one of them` });
    return;
  }
  const tag = kinds[0];
  const kind: DeclKind = tag ?? 'tool';
  tools.push({
    name,
    local: decl.name.text,
    decl,
    paramType: params.length === 1 ? text(source, params[0]!.type) : null,
    returnsVoid,
    kind,
    tagText: tag === undefined ? '' : tags.get(tag)!,
  });
}

/** The glue for `tools`, to append to the entry's text. */
export function glueFor(tools: readonly ToolDecl[]): string {
  const lines = [
    '',
    '// berm: ABI glue written by the @berm/guest transform',
    'import { __berm_args, __berm_no_args, __berm_ok, __berm_ok_void, __berm_prompt_args, __berm_prompt_answer } from "@berm/guest";',
    `export { ${ALLOC_EXPORT}, ${ABORT_RESULT} } from "@berm/guest";`,
  ];
  for (const tool of tools) {
    if (tool.kind === 'resource' || tool.kind === 'template' || tool.kind === 'complete') continue;
    if (tool.kind === 'prompt') {
      const args = tool.paramType === null ? '' : `__berm_prompt_args<${tool.paramType}>(ptr, len)`;
      const prelude = tool.paramType === null ? '__berm_no_args(ptr, len); ' : '';
      lines.push(
        `export function ${promptGlueExport(tool.name)}(ptr: usize, len: i32): i64 { ${prelude}return __berm_prompt_answer(${tool.local}(${args})); }`,
      );
      continue;
    }
    const args = tool.paramType === null ? '' : `__berm_args<${tool.paramType}>(ptr, len)`;
    const prelude = tool.paramType === null ? '__berm_no_args(ptr, len); ' : '';
    const body = tool.returnsVoid
      ? `${prelude}${tool.local}(${args}); return __berm_ok_void();`
      : `${prelude}return __berm_ok(${tool.local}(${args}));`;
    lines.push(`export function ${glueExport(tool.name)}(ptr: usize, len: i32): i64 { ${body} }`);
  }
  lines.push(...surfaceGlue(tools));
  return `${lines.join('\n')}\n`;
}
