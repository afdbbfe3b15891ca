/**
 * The program's resources, templates and completions as the manifest lists them (docs/contract.md
 * §6a), from its `@resource PATH`, `@template PATH` and `@complete TARGET ARGUMENT` functions: a
 * resource's name is its function's, its description the doc comment, its MIME type `@mime` (else
 * text/plain for a string, application/octet-stream for bytes). What does not fit is reported where it
 * is written; when any function of `berm_resource_read` or `berm_complete` cannot be rendered, that
 * export's dispatch is not compiled, so its errors are the function's own.
 */
import { ElementKind } from 'assemblyscript';
import type { Class, File, Function as AsFunction, FunctionPrototype, Program, Range, Type } from 'assemblyscript';
import {
  isResourcePath,
  parseTemplate,
  type PromptSpec,
  type ResourceSpec,
  type ResourceTemplateSpec,
  templateVariables,
} from '@berm/manifest';
import { type Diagnostics, nameRange } from './diagnostics.js';
import { docBefore } from './docs.js';
import { type SchemaRenderer, typeName, UnsupportedType } from './schema.js';
import { COMPLETE_GLUE, READ_GLUE, readCompleteTag, readPathTag } from './surface-glue.js';
import type { ToolDecl } from './tools.js';

/** Where bermd serves the harness's usage (docs/contract.md §6a): no resource may take it. */
const USAGE_PATH = 'usage';

export interface RenderedSurface {
  resources: ResourceSpec[];
  templates: ResourceTemplateSpec[];
  /** Whether `berm_resource_read` and `berm_complete` were compiled. */
  read: boolean;
  complete: boolean;
}

function resolve(program: Program, file: File, decl: ToolDecl): AsFunction | null {
  const proto = file.members?.get(decl.local);
  if (proto === undefined || proto.kind !== ElementKind.FunctionPrototype) return null;
  return program.resolver.resolveFunction(proto as FunctionPrototype, null) as AsFunction | null;
}

function isUint8Array(cls: Class | null): boolean {
  return cls !== null && cls.prototype.internalName === '~lib/typedarray/Uint8Array';
}

/** A read's contents: "text" for a string, "bytes" for a Uint8Array. */
function contentsOf(program: Program, type: Type, at: Range): 'text' | 'bytes' {
  if (!type.isNullableReference && type.classReference === program.stringInstance) return 'text';
  if (!type.isNullableReference && isUint8Array(type.classReference)) return 'bytes';
  throw new UnsupportedType(`a resource returns its contents, a string (text) or a Uint8Array (bytes), not ${typeName(program, type)}`, at);
}

function pathOf(decl: ToolDecl): string {
  const path = readPathTag(decl.tagText);
  if (path === undefined)
    throw new UnsupportedType(
      `@${decl.kind} takes one path relative to the harness (@${decl.kind} ${decl.kind === 'resource' ? 'notes/today' : 'items/{id}'})`,
      nameRange(decl.decl),
    );
  return path;
}

function described(
  decl: ToolDecl,
  path: string,
  contents: 'text' | 'bytes',
): { path: string; name: string; description: string; mimeType: string } {
  const doc = docBefore(decl.decl.range.source.text, decl.decl.range.start);
  const mime = doc.tags.get('mime')?.trim();
  const mimeType = mime !== undefined && mime !== '' ? mime : contents === 'text' ? 'text/plain' : 'application/octet-stream';
  return { path, name: decl.name, description: doc.text, mimeType };
}

function renderResource(program: Program, fn: AsFunction, decl: ToolDecl): ResourceSpec {
  const path = pathOf(decl);
  if (!isResourcePath(path))
    throw new UnsupportedType(
      `resource path ${path} is not a relative URI path (segments of letters, digits and -._~!$&'()*+,;=:@ or %XX, joined by /)`,
      nameRange(decl.decl),
    );
  if (path === USAGE_PATH)
    throw new UnsupportedType(
      `resource path ${USAGE_PATH} is where bermd serves the harness's usage; choose another`,
      nameRange(decl.decl),
    );
  if (fn.signature.parameterTypes.length > 0)
    throw new UnsupportedType(
      `resource ${path} takes no parameter (a template, @template, takes its variables)`,
      decl.decl.signature.parameters[0]!.type.range,
    );
  return described(decl, path, contentsOf(program, fn.signature.returnType, decl.decl.signature.returnType.range));
}

function renderTemplate(program: Program, renderer: SchemaRenderer, fn: AsFunction, decl: ToolDecl): ResourceTemplateSpec {
  const path = pathOf(decl);
  const parts = parseTemplate(path);
  if (typeof parts === 'string') throw new UnsupportedType(`template ${path}: ${parts}`, nameRange(decl.decl));
  const variables = templateVariables(parts);
  const params = fn.signature.parameterTypes;
  const at = params.length === 1 ? decl.decl.signature.parameters[0]!.type.range : nameRange(decl.decl);
  const cls = params.length === 1 && !params[0]!.isNullableReference ? params[0]!.classReference : null;
  if (cls === null)
    throw new UnsupportedType(`template ${path} takes one @json class whose string fields are its variables (${variables.join(', ')})`, at);
  const schema = renderer.renderArguments(cls, at) as { properties?: Record<string, Record<string, unknown>> };
  const fields = Object.entries(schema.properties ?? {});
  for (const [name, field] of fields) {
    if (!variables.includes(name))
      throw new UnsupportedType(`template ${path} has no variable {${name}}, which field ${name} of ${cls.name} would hold`, at);
    if (field.type !== 'string')
      throw new UnsupportedType(`template variable ${name} is given as a string; field ${name} of ${cls.name} must be a string`, at);
  }
  const missing = variables.filter((v) => !fields.some(([name]) => name === v));
  if (missing.length > 0)
    throw new UnsupportedType(`template ${path}'s variable ${missing.join(', ')} has no string field in ${cls.name}`, at);
  return described(decl, path, contentsOf(program, fn.signature.returnType, decl.decl.signature.returnType.range));
}

function checkCompleter(program: Program, fn: AsFunction, decl: ToolDecl): void {
  const params = fn.signature.parameterTypes;
  const returns = fn.signature.returnType;
  const cls = returns.classReference;
  const strings =
    !returns.isNullableReference &&
    cls !== null &&
    cls.prototype === program.arrayPrototype &&
    cls.typeArguments?.[0]?.classReference === program.stringInstance &&
    !cls.typeArguments[0]!.isNullableReference;
  const valueParam = params.length === 1 && params[0]!.classReference === program.stringInstance && !params[0]!.isNullableReference;
  if (!valueParam || !strings)
    throw new UnsupportedType(
      `a @complete function takes the value typed so far and returns the values it suggests: (value: string): string[], not (${params.map((p) => typeName(program, p)).join(', ')}): ${typeName(program, returns)}`,
      nameRange(decl.decl),
    );
}

export function renderSurface(
  program: Program,
  file: File,
  renderer: SchemaRenderer,
  decls: readonly ToolDecl[],
  prompts: readonly PromptSpec[],
  diagnostics: Diagnostics,
): RenderedSurface {
  const out: RenderedSurface = { resources: [], templates: [], read: false, complete: false };
  let readFailed = false;
  let completeFailed = false;
  const paths = new Set<string>();
  const fail = (decl: ToolDecl, e: unknown): void => {
    if (!(e instanceof UnsupportedType)) throw e;
    diagnostics.error(e.range ?? nameRange(decl.decl), `${decl.kind} ${decl.name}: ${e.message}`);
  };
  for (const decl of decls) {
    if (decl.kind !== 'resource' && decl.kind !== 'template') continue;
    out.read = true;
    const fn = resolve(program, file, decl);
    if (fn === null) {
      readFailed = true;
      continue;
    }
    try {
      const spec = decl.kind === 'resource' ? renderResource(program, fn, decl) : renderTemplate(program, renderer, fn, decl);
      if (paths.has(spec.path))
        throw new UnsupportedType(`path ${spec.path} is declared by another @resource or @template`, nameRange(decl.decl));
      paths.add(spec.path);
      if (decl.kind === 'resource') out.resources.push(spec);
      else out.templates.push(spec);
    } catch (e) {
      fail(decl, e);
      readFailed = true;
    }
  }
  const completed = new Set<string>();
  for (const decl of decls) {
    if (decl.kind !== 'complete') continue;
    out.complete = true;
    const fn = resolve(program, file, decl);
    try {
      if (fn === null) throw new UnsupportedType('could not be resolved', nameRange(decl.decl));
      const tag = readCompleteTag(decl.tagText);
      if (tag === undefined)
        throw new UnsupportedType(
          '@complete names a prompt and its argument, or a template and its variable: @complete PROMPT ARGUMENT or @complete items/{id} id',
          nameRange(decl.decl),
        );
      checkCompleter(program, fn, decl);
      const key = `${tag.target} ${tag.argument}`;
      if (completed.has(key))
        throw new UnsupportedType(`${tag.argument} of ${tag.target} is completed by another @complete function`, nameRange(decl.decl));
      completed.add(key);
      if (tag.prompt) {
        const argument = prompts.find((p) => p.name === tag.target)?.arguments.find((a) => a.name === tag.argument);
        if (argument === undefined)
          throw new UnsupportedType(`no @prompt ${tag.target} with an argument ${tag.argument}`, nameRange(decl.decl));
        argument.complete = true;
      } else {
        const template = out.templates.find((t) => t.path === tag.target);
        const parts = parseTemplate(tag.target);
        if (template === undefined || typeof parts === 'string' || !templateVariables(parts).includes(tag.argument))
          throw new UnsupportedType(`no @template ${tag.target} with a variable {${tag.argument}}`, nameRange(decl.decl));
        template.complete = [...(template.complete ?? []), tag.argument];
      }
    } catch (e) {
      fail(decl, e);
      completeFailed = true;
    }
  }
  if (readFailed) {
    file.exports?.delete(READ_GLUE);
    out.read = false;
  }
  if (completeFailed) {
    file.exports?.delete(COMPLETE_GLUE);
    out.complete = false;
  }
  return out;
}
