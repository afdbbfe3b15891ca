/**
 * The manifest's tools and events, rendered from the types the harness names: a tool's parameter and
 * result, and each `@event` class of the harness's own files. What cannot be rendered is reported
 * where it is written, and left out.
 */
import { ElementKind, NodeKind, SourceKind } from 'assemblyscript';
import type { Class, ClassDeclaration, ClassPrototype, File, Function as AsFunction, FunctionPrototype, Program } from 'assemblyscript';
import type { EventSpec, ToolSpec } from '@berm/manifest';
import type { Diagnostics } from './diagnostics.js';
import { contentOfTags } from './content-tags.js';
import { docBefore } from './docs.js';
import { effectOfTags, type TagPlaces } from './effects.js';
import { eventName } from './names.js';
import { isJsonClass, type SchemaRenderer, typeName, UnsupportedType } from './schema.js';
import { TOOL_NAME, type ToolDecl } from './tools.js';

/** An `@event` class, and the event it renders as. */
export interface EventInfo {
  cls: Class;
  spec: EventSpec;
}

/** The tool `tool` of the entry `file`, as the manifest lists it; undefined when it cannot be rendered. */
export function renderTool(
  program: Program,
  file: File,
  renderer: SchemaRenderer,
  tool: ToolDecl,
  diagnostics: Diagnostics,
  places: TagPlaces,
): ToolSpec | undefined {
  const proto = file.members?.get(tool.local);
  if (proto === undefined || proto.kind !== ElementKind.FunctionPrototype) return undefined;
  const fn = program.resolver.resolveFunction(proto as FunctionPrototype, null) as AsFunction | null;
  if (fn === null) return undefined;
  const doc = docBefore(tool.decl.range.source.text, tool.decl.range.start);
  const spec: ToolSpec = { name: tool.name, description: doc.text, arguments: { type: 'object', properties: {} } };
  try {
    const params = fn.signature.parameterTypes;
    if (params.length === 1) {
      const type = params[0]!;
      const at = tool.decl.signature.parameters[0]!.type.range;
      const cls = type.classReference;
      if (
        !type.isReference ||
        cls === null ||
        cls === program.stringInstance ||
        cls.prototype === program.arrayPrototype ||
        cls.prototype === program.mapPrototype
      ) {
        throw new UnsupportedType(
          `a tool's parameter must be a @json class whose fields are its arguments, not ${typeName(program, type)}`,
          at,
        );
      }
      if (type.isNullableReference)
        throw new UnsupportedType(
          `a tool's parameter cannot be nullable (${typeName(program, type)}): the arguments are always an object`,
          at,
        );
      spec.arguments = renderer.renderArguments(cls, at);
    }
    if (!tool.returnsVoid) spec.returns = renderer.render(fn.signature.returnType, 'out', tool.decl.signature.returnType.range);
  } catch (e) {
    if (!(e instanceof UnsupportedType)) throw e;
    diagnostics.error(e.range ?? tool.decl.name.range, `tool ${tool.name}: ${e.message}`);
    return undefined;
  }
  if (doc.tags.has('query')) spec.query = true;
  if (doc.tags.has('deprecated')) spec.deprecated = true;
  const effect = effectOfTags(tool.name, doc, places, diagnostics);
  if (effect !== undefined) spec.effect = effect;
  const content = contentOfTags(tool.name, doc, places, diagnostics);
  if (content !== undefined) spec.content = content;
  return spec;
}

/** The `@event` classes of the harness's own files, in file and declaration order. */
export function renderEvents(program: Program, renderer: SchemaRenderer, diagnostics: Diagnostics): EventInfo[] {
  const events: EventInfo[] = [];
  const names = new Map<string, string>();
  for (const source of program.sources) {
    if (source.sourceKind !== SourceKind.User && source.sourceKind !== SourceKind.UserEntry) continue;
    const file = program.filesByName.get(source.internalPath);
    for (const statement of source.statements) {
      if (statement.kind !== NodeKind.ClassDeclaration) continue;
      const decl = statement as ClassDeclaration;
      const doc = docBefore(source.text, decl.range.start);
      if (!doc.tags.has('event')) continue;
      const className = decl.name.text;
      const proto = file?.members?.get(className);
      if (proto === undefined || proto.kind !== ElementKind.ClassPrototype) continue;
      if (decl.typeParameters !== null && decl.typeParameters.length > 0) {
        diagnostics.error(decl.name.range, `event class ${className} is generic; an event's fields must be known to render its schema`);
        continue;
      }
      const cls = program.resolver.resolveClass(proto as ClassPrototype, null);
      if (cls === null) continue;
      if (!isJsonClass(cls)) {
        diagnostics.error(decl.name.range, `event class ${className} must be a @json class: emit() sends its fields with json-as`);
        continue;
      }
      const name = eventName(className);
      if (!TOOL_NAME.test(name)) {
        diagnostics.error(decl.name.range, `event class ${className} gives the name ${name}, which is not a manifest name`);
        continue;
      }
      const clash = names.get(name);
      if (clash !== undefined) {
        diagnostics.error(decl.name.range, `event classes ${clash} and ${className} both give the event name ${name}`);
        continue;
      }
      names.set(name, className);
      try {
        const spec: EventSpec = { name, description: doc.text, fields: renderer.renderFields(cls, decl.name.range) };
        if (doc.tags.has('deprecated')) spec.deprecated = true;
        events.push({ cls, spec });
      } catch (e) {
        if (!(e instanceof UnsupportedType)) throw e;
        diagnostics.error(e.range ?? decl.name.range, `event ${name}: ${e.message}`);
      }
    }
  }
  return events;
}
