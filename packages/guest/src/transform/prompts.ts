/**
 * A `@prompt` function of the entry as the manifest lists it: its parameter's `@json` class gives the
 * arguments (a `string` field is required, a `string | null` one optional; each field's doc comment is
 * its description), its doc comment the prompt's description, and it returns the `string` the prompt's
 * one user message holds, or the `Messages` it answers. What does not fit is reported where it is written, and left out.
 */
import { ElementKind } from 'assemblyscript';
import type { File, Function as AsFunction, FunctionPrototype, Program } from 'assemblyscript';
import type { PromptArgumentSpec, PromptSpec } from '@berm/manifest';
import type { Diagnostics } from './diagnostics.js';
import { docBefore } from './docs.js';
import { type SchemaRenderer, typeName, UnsupportedType } from './schema.js';
import type { ToolDecl } from './tools.js';

export function renderPrompt(
  program: Program,
  file: File,
  renderer: SchemaRenderer,
  prompt: ToolDecl,
  diagnostics: Diagnostics,
): PromptSpec | undefined {
  const proto = file.members?.get(prompt.local);
  if (proto === undefined || proto.kind !== ElementKind.FunctionPrototype) return undefined;
  const fn = program.resolver.resolveFunction(proto as FunctionPrototype, null) as AsFunction | null;
  if (fn === null) return undefined;
  const doc = docBefore(prompt.decl.range.source.text, prompt.decl.range.start);
  const spec: PromptSpec = { name: prompt.name, description: doc.text, arguments: [] };
  try {
    const returns = fn.signature.returnType;
    const messages = returns.classReference?.prototype.internalName.endsWith('/guest/assembly/messages/Messages') === true;
    if ((returns.classReference !== program.stringInstance && !messages) || returns.isNullableReference) {
      throw new UnsupportedType(
        `a prompt returns the string its one user message holds, or the Messages it answers, not ${typeName(program, returns)}`,
        prompt.decl.signature.returnType.range,
      );
    }
    const params = fn.signature.parameterTypes;
    if (params.length === 1) {
      const at = prompt.decl.signature.parameters[0]!.type.range;
      const cls = params[0]!.classReference;
      if (cls === null || params[0]!.isNullableReference) {
        throw new UnsupportedType(`a prompt's parameter must be a @json class of string fields, not ${typeName(program, params[0]!)}`, at);
      }
      const schema = renderer.renderArguments(cls, at) as { properties?: Record<string, Record<string, unknown>> };
      for (const [name, field] of Object.entries(schema.properties ?? {})) {
        const type = field.type;
        const text = type === 'string' || (Array.isArray(type) && type.length === 2 && type.includes('string') && type.includes('null'));
        if (!text)
          throw new UnsupportedType(
            `prompt argument ${name} must be a string field (or string | null, optional): MCP gives prompts strings`,
            at,
          );
        const argument: PromptArgumentSpec = { name, description: typeof field.description === 'string' ? field.description : '' };
        if (type === 'string') argument.required = true;
        spec.arguments.push(argument);
      }
    }
  } catch (e) {
    if (!(e instanceof UnsupportedType)) throw e;
    diagnostics.error(e.range ?? prompt.decl.name.range, `prompt ${prompt.name}: ${e.message}`);
    return undefined;
  }
  return spec;
}
