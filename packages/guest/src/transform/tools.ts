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
import type { FunctionDeclaration, NamedTypeNode, Source } from 'assemblyscript';

/** Tool names as the manifest allows them (docs/contract.md §2). */
export const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ToolDecl {
  name: string;
  decl: FunctionDeclaration;
  /** The parameter's type as written, or null for a tool that takes none. */
  paramType: string | null;
  returnsVoid: boolean;
}

export interface ToolProblem {
  message: string;
  node: FunctionDeclaration;
}

function text(source: Source, node: { range: { start: number; end: number } }): string {
  return source.text.slice(node.range.start, node.range.end);
}

/** The exported functions of the entry, as tools; problems for those that cannot be. */
export function findTools(entry: Source, problems: ToolProblem[]): ToolDecl[] {
  const tools: ToolDecl[] = [];
  for (const statement of entry.statements) {
    if (statement.kind !== NodeKind.FunctionDeclaration) continue;
    const decl = statement as FunctionDeclaration;
    if (!(decl.flags & CommonFlags.Export) || decl.flags & CommonFlags.Ambient) continue;
    const name = decl.name.text;
    const params = decl.signature.parameters;
    if (!TOOL_NAME.test(name)) {
      problems.push({ node: decl, message: `tool name ${name} is not a manifest name (letters, digits and _, not starting with a digit)` });
      continue;
    }
    if (decl.typeParameters !== null && decl.typeParameters.length > 0) {
      problems.push({ node: decl, message: `tool ${name} is generic; a tool's types must be known to render its schema` });
      continue;
    }
    if (params.length > 1) {
      problems.push({
        node: decl,
        message: `tool ${name} takes ${params.length} parameters; a tool takes none, or one @json class whose fields are its arguments`,
      });
      continue;
    }
    const returnType = decl.signature.returnType;
    if (returnType === null || returnType.range.start === returnType.range.end) {
      problems.push({ node: decl, message: `tool ${name} must declare its return type (void when it returns nothing)` });
      continue;
    }
    const returnsVoid = returnType.kind === NodeKind.NamedType && (returnType as NamedTypeNode).name.identifier.text === 'void';
    tools.push({ name, decl, paramType: params.length === 1 ? text(entry, params[0]!.type) : null, returnsVoid });
  }
  return tools;
}

/** The glue for `tools`, to append to the entry's text. */
export function glueFor(tools: readonly ToolDecl[]): string {
  const lines = [
    '',
    '// berm: ABI glue written by the @berm/guest transform',
    'import { __berm_args, __berm_no_args, __berm_ok, __berm_ok_void } from "@berm/guest";',
    'export { berm_alloc, __berm_abort_result } from "@berm/guest";',
  ];
  for (const tool of tools) {
    const args = tool.paramType === null ? '' : `__berm_args<${tool.paramType}>(ptr, len)`;
    const prelude = tool.paramType === null ? '__berm_no_args(ptr, len); ' : '';
    const body = tool.returnsVoid ? `${prelude}${tool.name}(${args}); return __berm_ok_void();` : `${prelude}return __berm_ok(${tool.name}(${args}));`;
    lines.push(`export function __berm_tool_${tool.name}(ptr: usize, len: i32): i64 { ${body} }`);
  }
  return `${lines.join('\n')}\n`;
}
