/**
 * Driving json-as. It runs inside this transform rather than beside it because its afterParse must
 * come after the glue is parsed, and because it marks any source whose internal path is
 * `assembly/index` as a library file (to honour a GC hook in its own index). A harness's entry has
 * exactly that path, and a library file's exports are not the module's, so the entry is marked back
 * as the user entry after it.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SourceKind } from 'assemblyscript';
import type { Parser, Program, Source, Type } from 'assemblyscript';
import type { BinaryenModule } from './module.js';
import { PACKAGE_JSON } from './project.js';

/** A transform class of json-as, as its package exports it. */
// biome-ignore lint/suspicious/noExplicitAny: json-as publishes no types for its transform
export type TransformClass = new () => any;

/** What the compiler gives a transform (on its prototype), handed on to json-as's. */
const CONTEXT = ['program', 'binaryen', 'baseDir', 'stdout', 'stderr', 'log', 'readFile', 'writeFile', 'listFiles'] as const;

export type TransformContext = Record<(typeof CONTEXT)[number], unknown> & { baseDir: string };

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

/** json-as's transform, run at each of this transform's hooks. */
export class JsonAs {
  private constructor(
    // biome-ignore lint/suspicious/noExplicitAny: json-as publishes no types for its transform
    private readonly transform: any,
  ) {}

  /** json-as's transform (`given`, else the one `loadJsonAs` finds), given the compiler's context as its own. */
  static async create(context: TransformContext, given?: TransformClass): Promise<JsonAs> {
    const Transform = given ?? (await loadJsonAs(context.baseDir));
    const transform = new Transform();
    for (const key of CONTEXT) transform[key] = context[key];
    return new JsonAs(transform);
  }

  /** json-as's afterParse, after which the harness's `entry` is the user entry again. */
  async afterParse(parser: Parser, entry: Source): Promise<void> {
    await this.transform.afterParse?.(parser);
    entry.sourceKind = SourceKind.UserEntry;
  }

  async afterInitialize(program: Program): Promise<void> {
    await this.transform.afterInitialize?.(program);
    shrinkJsonCache(program);
  }

  async afterCompile(module: BinaryenModule): Promise<void> {
    await this.transform.afterCompile?.(module);
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
