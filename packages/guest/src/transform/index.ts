/**
 * The @berm/guest transform: what the Rust macros do in the design notes, for AssemblyScript. It
 * renders the manifest at compile time from the types the tools name, writes the ABI glue, and
 * embeds the manifest as the `.berm.abi` custom section. This class wires the compiler's hooks, each
 * in its own module, and runs json-as's at each (json-as.ts says why inside this transform):
 *
 * - afterParse (after-parse.ts): adds ~lib/berm_abort (the program's `abort`), appends each tool's
 *   glue to the entry, then runs json-as's own afterParse (so its `@json` methods exist before types
 *   resolve);
 * - afterInitialize (after-initialize.ts): resolves each tool's parameter and result types and each
 *   `@event` class, and renders their schemas; a tool that cannot be rendered is reported where it is
 *   written;
 * - afterCompile (after-compile.ts): checks the module's imports against package.json's declared
 *   syscalls, shapes the exports (module.ts), and adds the section.
 */
import type { Parser, Program } from 'assemblyscript';
import type { ManifestData } from '@berm/manifest';
import { type RenderedHarness, renderHarness } from './after-initialize.js';
import { finishModule } from './after-compile.js';
import { type ParsedHarness, parseHarness } from './after-parse.js';
import { Diagnostics } from './diagnostics.js';
import { JsonAs, type TransformClass } from './json-as.js';
import type { Binaryen, BinaryenModule } from './module.js';
import type { Project } from './project.js';
import { eventName } from './names.js';

export { eventName };
export { loadJsonAs, type TransformClass } from './json-as.js';

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

  private readonly diagnostics: Diagnostics;
  private jsonAs: JsonAs | null = null;
  private parsed: ParsedHarness | null = null;
  private rendered: RenderedHarness = {
    tools: [],
    events: [],
    prompts: [],
    surface: { resources: [], templates: [], read: false, complete: false },
  };

  constructor() {
    // The compiler's program is on the prototype already (see above).
    this.diagnostics = new Diagnostics(this.program);
  }

  async afterParse(parser: Parser): Promise<void> {
    this.jsonAs = await JsonAs.create(this, this.options.jsonAs);
    this.parsed = await parseHarness(this, parser, this.diagnostics);
    if (this.parsed.entry !== null) await this.jsonAs.afterParse(parser, this.parsed.entry);
  }

  async afterInitialize(program: Program): Promise<void> {
    await this.jsonAs?.afterInitialize(program);
    if (this.parsed !== null) this.rendered = renderHarness(program, this.parsed, this.diagnostics);
  }

  async afterCompile(module: BinaryenModule): Promise<void> {
    await this.jsonAs?.afterCompile(module);
    if (this.parsed === null || this.parsed.entry === null) return;
    const manifest = finishModule(this.binaryen, module, this.program, this.parsed, this.rendered, this.diagnostics);
    const report = this.options.report;
    if (manifest !== undefined && report !== undefined) {
      report.manifest = manifest;
      report.project = this.parsed.project;
    }
  }
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
