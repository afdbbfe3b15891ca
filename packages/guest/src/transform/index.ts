/**
 * The @berm/guest transform: what the Rust macros do in the design notes, for AssemblyScript. It
 * renders the manifest at compile time from the types the tools name, writes the ABI glue, and
 * embeds the manifest as the `.berm.abi` custom section.
 *
 * - afterParse: adds ~lib/berm_abort (the program's `abort`), appends each tool's glue to the
 *   entry, then runs json-as's own afterParse (so its `@json` methods exist before types resolve);
 * - afterInitialize: resolves each tool's parameter and result types and each `@event` class, and
 *   renders their schemas; a tool that cannot be rendered is reported where it is written;
 * - afterCompile: checks the module's imports against package.json's declared syscalls, shapes the
 *   exports (module.ts), and adds the section.
 *
 * json-as runs inside this transform rather than beside it because its afterParse must come after
 * the glue is parsed, and because it marks any source whose internal path is `assembly/index` as a
 * library file (to honour a GC hook in its own index). A harness's entry has exactly that path, and a
 * library file's exports are not the module's, so the entry is marked back as the user entry after it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ElementKind, NodeKind, SourceKind } from 'assemblyscript';
import type {
  Class,
  ClassDeclaration,
  DiagnosticCode,
  ClassPrototype,
  File,
  Function as AsFunction,
  FunctionPrototype,
  Node,
  Parser,
  Program,
  Range,
  Source,
  Type,
} from 'assemblyscript';
import { Manifest, manifestRecords, SECTION_NAME, type EventSpec, type ManifestData, type ToolSpec } from '@berm/manifest';
import { docBefore } from './docs.js';
import { functionImports, shapeExports, type Binaryen, type BinaryenModule } from './module.js';
import { offsetOf, PACKAGE_JSON, readProject, type Project, type ProjectProblem } from './project.js';
import { isJsonClass, SchemaRenderer, typeName, UnsupportedType } from './schema.js';
import { eventName } from './names.js';
import { findTools, glueFor, TOOL_NAME, type ToolDecl, type ToolProblem } from './tools.js';

export { eventName };

/** The host calls every host serves (docs/contract.md §4); anything else imported is a syscall. */
/**
 * DiagnosticCode.Transform_0_1, "Transform '{0}': {1}". A number, not the enum: the enum is a value of the
 * compiler's module, and the transform must not load a second copy of the compiler beside the one running.
 */
const TRANSFORM_DIAGNOSTIC = 109 as DiagnosticCode;

const ABI_HOST_CALLS = new Set(['berm.call', 'berm.log', 'berm.emit']);

/** What a harness's imports of the `env` module come from, for the message that refuses them. */
const ENV_IMPORTS: Record<string, string> = {
  seed: 'Math.random (seeded by the host)',
  'Date.now': 'Date.now()',
  trace: 'trace()',
  'console.log': 'console.log()',
};

const here = dirname(fileURLToPath(import.meta.url));
/** ~lib/berm_abort: the guest library's assembly/abort.ts, shipped beside this transform. */
const ABORT_SOURCE = join(here, '..', '..', 'assembly', 'abort.ts');

/** A transform class of json-as, as its package exports it. */
// biome-ignore lint/suspicious/noExplicitAny: json-as publishes no types for its transform
export type TransformClass = new () => any;

export interface BermTransformOptions {
  /** json-as's transform class, from the copy whose AssemblyScript library the build resolves. */
  jsonAs?: TransformClass;
  /** What the build found: set by the build and read back after it. */
  report?: BuildReport;
}

/** What a build learns besides diagnostics. */
export interface BuildReport {
  manifest?: ManifestData;
  project?: Project;
}

interface ToolInfo extends ToolDecl {
  spec?: ToolSpec;
}

interface EventInfo {
  cls: Class;
  spec: EventSpec;
}

/**
 * Loads json-as's transform the way `asc --transform json-as` would from `baseDir`: the project's
 * own copy when it has one, else the one @berm/guest depends on.
 */
export async function loadJsonAs(baseDir: string): Promise<TransformClass> {
  let resolved: string;
  try {
    resolved = createRequire(pathToFileURL(join(baseDir, PACKAGE_JSON)).href).resolve('json-as');
  } catch {
    resolved = createRequire(import.meta.url).resolve('json-as');
  }
  const mod = (await import(pathToFileURL(resolved).href)) as { default?: TransformClass };
  if (typeof mod.default !== 'function') throw new Error(`${resolved} does not export a transform class`);
  return mod.default;
}

export class BermTransform {
  // Set on the prototype by the compiler before it constructs the transform.
  declare readonly program: Program;
  declare readonly binaryen: Binaryen;
  declare readonly baseDir: string;
  declare readonly stdout: unknown;
  declare readonly stderr: unknown;
  declare readonly log: (...args: unknown[]) => void;
  declare readonly readFile: (filename: string, baseDir: string) => string | null | Promise<string | null>;
  declare readonly writeFile: unknown;
  declare readonly listFiles: unknown;

  /** Options: a subclass made by `configure` sets them. */
  protected get options(): BermTransformOptions {
    return {};
  }

  // biome-ignore lint/suspicious/noExplicitAny: json-as publishes no types for its transform
  private jsonAs: any;
  private entry: Source | null = null;
  private tools: ToolInfo[] = [];
  private events: EventInfo[] = [];
  private project: Project | null = null;
  private packageText: string | null = null;
  private packageSource: Source | null = null;
  private toolProblems: ToolProblem[] = [];

  async afterParse(parser: Parser): Promise<void> {
    const JsonAs = this.options.jsonAs ?? (await loadJsonAs(this.baseDir));
    const jsonAs = new JsonAs();
    for (const key of ['program', 'binaryen', 'baseDir', 'stdout', 'stderr', 'log', 'readFile', 'writeFile', 'listFiles'] as const) {
      jsonAs[key] = this[key];
    }
    this.jsonAs = jsonAs;

    this.packageText = await this.readFile(PACKAGE_JSON, this.baseDir);
    const readme = await this.readFile('README.md', this.baseDir);
    const problems: ProjectProblem[] = [];
    this.project = readProject(this.packageText, readme, problems);
    for (const problem of problems) this.errorIn(PACKAGE_JSON, problem.offset, problem.message);

    // The program's `abort` is ~lib/berm_abort's: a library entry file's exports are globals.
    parser.parseFile(readFileSync(ABORT_SOURCE, 'utf8'), '~lib/berm_abort.ts', false);
    const aliases = (this.program.options.globalAliases ??= new Map<string, string>());
    aliases.set('abort', '__berm_abort');

    // The compiler parses its runtime as an entry too (~lib/rt/index-incremental); the harness's is the one outside ~lib.
    const entries = parser.sources.filter((s) => s.sourceKind === SourceKind.UserEntry && !s.internalPath.startsWith('~lib/'));
    const entry = entries.find((s) => s.internalPath === 'assembly/index') ?? entries[0];
    if (entry === undefined) return;
    // The entry is parsed again only when it parsed cleanly: otherwise its errors would be reported twice.
    const parsed = !hasErrors(parser);
    const toolProblems: ToolProblem[] = [];
    const tools = findTools(entry, toolProblems);
    // Reported after initialisation: an error now would stop the build as a parse error, before the
    // types of the other tools are checked.
    this.toolProblems = toolProblems;
    if (parsed) {
      // Parsed again with its glue, under the same path: the first parse is dropped.
      parser.sources.splice(parser.sources.indexOf(entry), 1);
      parser.donelog.delete(entry.internalPath);
      parser.parseFile(entry.text + glueFor(tools), entry.normalizedPath, true);
      this.entry = parser.sources[parser.sources.length - 1]!;
      this.tools = tools.map((t) => ({ ...t, decl: this.redeclared(t) }));
    } else {
      this.entry = entry;
    }

    await this.jsonAs.afterParse?.(parser);
    this.entry.sourceKind = SourceKind.UserEntry;
  }

  /** The declaration of `tool` in the entry parsed with its glue. */
  private redeclared(tool: ToolDecl): ToolDecl['decl'] {
    for (const statement of this.entry!.statements) {
      if (statement.kind === NodeKind.FunctionDeclaration && (statement as ToolDecl['decl']).name.text === tool.local)
        return statement as ToolDecl['decl'];
    }
    return tool.decl;
  }

  async afterInitialize(program: Program): Promise<void> {
    await this.jsonAs?.afterInitialize?.(program);
    shrinkJsonCache(program);
    for (const problem of this.toolProblems) this.error(nameRange(problem.node), problem.message);
    const entry = this.entry;
    if (entry === null) return;
    const file = program.filesByName.get(entry.internalPath);
    if (file === undefined) return;
    const renderer = new SchemaRenderer(program);
    for (const tool of this.tools) {
      tool.spec = this.renderTool(program, file, renderer, tool);
      // A tool that cannot be rendered is not compiled into the ABI: its glue would only add errors.
      if (tool.spec === undefined) file.exports?.delete(`__berm_tool_${tool.name}`);
    }
    this.events = this.renderEvents(program, renderer);
  }

  private renderTool(program: Program, file: File, renderer: SchemaRenderer, tool: ToolInfo): ToolSpec | undefined {
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
      this.error(e.range ?? tool.decl.name.range, `tool ${tool.name}: ${e.message}`);
      return undefined;
    }
    if (doc.tags.has('query')) spec.query = true;
    if (doc.tags.has('deprecated')) spec.deprecated = true;
    return spec;
  }

  /** The `@event` classes of the harness's own files, in file and declaration order. */
  private renderEvents(program: Program, renderer: SchemaRenderer): EventInfo[] {
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
          this.error(decl.name.range, `event class ${className} is generic; an event's fields must be known to render its schema`);
          continue;
        }
        const cls = program.resolver.resolveClass(proto as ClassPrototype, null);
        if (cls === null) continue;
        if (!isJsonClass(cls)) {
          this.error(decl.name.range, `event class ${className} must be a @json class: emit() sends its fields with json-as`);
          continue;
        }
        const name = eventName(className);
        if (!TOOL_NAME.test(name)) {
          this.error(decl.name.range, `event class ${className} gives the name ${name}, which is not a manifest name`);
          continue;
        }
        const clash = names.get(name);
        if (clash !== undefined) {
          this.error(decl.name.range, `event classes ${clash} and ${className} both give the event name ${name}`);
          continue;
        }
        names.set(name, className);
        try {
          const spec: EventSpec = { name, description: doc.text, fields: renderer.renderFields(cls, decl.name.range) };
          if (doc.tags.has('deprecated')) spec.deprecated = true;
          events.push({ cls, spec });
        } catch (e) {
          if (!(e instanceof UnsupportedType)) throw e;
          this.error(e.range ?? decl.name.range, `event ${name}: ${e.message}`);
        }
      }
    }
    return events;
  }

  async afterCompile(module: BinaryenModule): Promise<void> {
    await this.jsonAs?.afterCompile?.(module);
    if (this.entry === null || this.project === null) return;
    const b = this.binaryen;
    this.checkEmits();
    this.checkImports(functionImports(b, module));
    this.checkSecrets();
    const tools = this.tools.filter((t) => t.spec !== undefined);
    const missing = shapeExports(
      b,
      module,
      tools.map((t) => t.name),
    );
    for (const name of missing) this.error(null, `the glue of tool ${name} was not compiled`);
    const project = this.project;
    const data: ManifestData = {
      abi_version: 1,
      version: project.version,
      description: project.description,
      homepage: project.homepage,
      repository: project.repository,
      readme: project.readme,
      usage: project.usage,
      tools: tools.map((t) => t.spec!),
      events: this.events.map((e) => e.spec),
      deps: project.deps,
    };
    let manifest: Manifest;
    try {
      manifest = Manifest.fromJSON(data);
    } catch (e) {
      this.error(null, `the manifest rendered for this harness is not valid: ${(e as Error).message}`);
      return;
    }
    const records = manifestRecords(manifest.data);
    module.addCustomSection(SECTION_NAME, new TextEncoder().encode(records.join('\n')));
    const report = this.options.report;
    if (report !== undefined) {
      report.manifest = manifest.toJSON();
      report.project = project;
    }
  }

  /** Every class a harness emits must be one of its `@event` classes. */
  private checkEmits(): void {
    const declared = new Set(this.events.map((e) => e.cls));
    for (const [name, element] of this.program.instancesByName) {
      if (element.kind !== ElementKind.Function || !/\/@berm\/guest\/assembly\/index\/emit<.*>$/.test(name)) continue;
      const type = (element as AsFunction).typeArguments?.[0];
      const cls = type?.classReference ?? null;
      if (cls !== null && declared.has(cls)) continue;
      const what = type === undefined ? '?' : typeName(this.program, type);
      const decl = cls?.prototype.declaration;
      this.error(decl?.name.range ?? null, `emit<${what}>: ${what} is not an event; mark its class with an @event doc tag`);
    }
  }

  /** Imports beyond the ABI's own host calls must be syscalls package.json declares, and each declared syscall must be imported. */
  private checkImports(imports: { module: string; field: string; internal: string }[]): void {
    const declared = this.project!.deps.syscalls;
    const imported = new Set<string>();
    for (const imp of imports) {
      const dotted = `${imp.module}.${imp.field}`;
      imported.add(dotted);
      if (ABI_HOST_CALLS.has(dotted) || Object.hasOwn(declared, dotted)) continue;
      if (imp.module === 'env') {
        const from = ENV_IMPORTS[imp.field] ?? `${imp.field} (${imp.internal})`;
        this.error(
          null,
          `the harness uses ${from}, which imports ${dotted} from the host; a berm host serves only its host calls, so it cannot be used in a harness`,
        );
      } else {
        this.errorIn(
          PACKAGE_JSON,
          offsetOf(this.packageText ?? '', ['berm', 'deps', 'syscalls']),
          `the code makes the syscall ${dotted} (imported by ${imp.internal}), which package.json does not declare: add it to berm.deps.syscalls with what it reaches, e.g. "${dotted}": ["api.example.com"]`,
        );
      }
    }
    for (const syscall of Object.keys(declared)) {
      if (!imported.has(syscall)) {
        this.errorIn(
          PACKAGE_JSON,
          offsetOf(this.packageText ?? '', ['berm', 'deps', 'syscalls', syscall]),
          `package.json declares the syscall ${syscall} in berm.deps.syscalls, but the code never makes it; remove it, or call what makes it (fetch() for berm.http.fetch)`,
        );
      }
    }
  }

  /** A `{secret:NAME}` written in the harness's code must name a secret package.json declares. */
  private checkSecrets(): void {
    const declared = new Set(this.project!.deps.secrets);
    for (const source of this.program.sources) {
      if (source.sourceKind !== SourceKind.User && source.sourceKind !== SourceKind.UserEntry) continue;
      for (const match of source.text.matchAll(/\{secret:([^}\s"'`]+)\}/g)) {
        if (declared.has(match[1]!)) continue;
        this.errorAt(
          source,
          match.index!,
          match[0].length,
          `${match[0]} names a secret package.json does not declare; add "${match[1]}" to berm.deps.secrets (the host refuses an undeclared secret)`,
        );
      }
    }
  }

  private error(range: Range | null, message: string): void {
    this.program.error(TRANSFORM_DIAGNOSTIC, range, 'berm', message);
  }

  private errorAt(source: Source, start: number, length: number, message: string): void {
    const RangeClass = (source.range as Range).constructor as new (start: number, end: number) => Range;
    const range = new RangeClass(start, start + length);
    range.source = source;
    this.error(range, message);
  }

  /** An error at character `offset` of a project file that is not a source (package.json). */
  private errorIn(path: string, offset: number, message: string): void {
    if (this.packageSource === null) {
      const any = this.program.sources[0];
      if (any === undefined) {
        this.error(null, `${path}: ${message}`);
        return;
      }
      const SourceClass = any.constructor as new (kind: SourceKind, path: string, text: string) => Source;
      this.packageSource = new SourceClass(SourceKind.User, path, this.packageText ?? '');
    }
    const end = this.packageText === null ? 0 : Math.max(this.packageText.indexOf('\n', offset), offset + 1);
    this.errorAt(this.packageSource, offset, Math.max(1, end - offset), message);
  }
}

/**
 * json-as sizes its string-cache arena by JSON_CACHE_SIZE, 1 MiB when undefined, and allocates it at
 * start even with the cache off (its default): every instance then zeroes a megabyte before its first
 * call. berm runs each call in a fresh instance, so that zeroing is most of a small call's time
 * (bench/build.js measures an AssemblyScript echo). Unless the build turns the cache on (JSON_CACHE,
 * which defines the size), the size is defined as json-as's minimum, 128 bytes.
 */
function shrinkJsonCache(program: Program): void {
  if (program.elementsByName.has('JSON_CACHE_SIZE')) return;
  // The compiler's own Type class and i64 constructor: the values must be of the copy that compiles.
  const TypeClass = program.options.usizeType.constructor as unknown as { u32: Type };
  const i64New = (globalThis as unknown as { i64_new(lo: number, hi?: number): unknown }).i64_new;
  program.registerConstantInteger('JSON_CACHE_SIZE', TypeClass.u32, i64New(128, 0) as never);
}

/** Where to report a problem with a declaration: its name, when it has one. */
function nameRange(node: Node): Range {
  const named = node as Node & { name?: { range: Range } };
  return named.name?.range ?? node.range;
}

function hasErrors(parser: Parser): boolean {
  return parser.diagnostics.some((d) => d.category === 3 /* DiagnosticCategory.Error */);
}

/** The transform with `options`, as a class the compiler can instantiate. */
export function configure(options: BermTransformOptions): typeof BermTransform {
  return class extends BermTransform {
    protected override get options(): BermTransformOptions {
      return options;
    }
  };
}

export default BermTransform;
