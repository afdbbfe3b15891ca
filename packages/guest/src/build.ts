/**
 * Builds a harness: compiles `DIR/assembly/index.ts` with AssemblyScript, json-as and the @berm/guest
 * transform, and returns the image (manifest embedded) without writing anything.
 */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ManifestData } from '@berm/manifest';
import { GuestError } from './errors.js';
import { imageName } from './image-name.js';
import { resolveToolchain, type Toolchain } from './toolchain.js';
import type { BermTransformOptions, BuildReport, TransformClass } from './transform/index.js';

export { GUEST_ERROR_CODES, GuestError, isGuestError, type GuestErrorCode } from './errors.js';
export { bundledToolchain, GUEST_DIR, resolveToolchain, type Toolchain, type ToolchainPackage } from './toolchain.js';

export const ENTRY = 'assembly/index.ts';

export interface BuildOptions {
  /** The project directory: package.json, README.md, assembly/index.ts. */
  dir: string;
  /** Binaryen's full optimisation (-O3); without it Binaryen optimises nothing (V8 compiles the module either way), which keeps a build of the scaffold within seconds. */
  optimize?: boolean;
}

/** One compiler diagnostic; `line` and `column` (1-based) when the file is one of the project's. */
export interface Diagnostic {
  category: 'error' | 'warning' | 'info';
  code: number;
  message: string;
  file?: string;
  line?: number;
  column?: number;
}

export interface BuildResult {
  /** The harness's name: package.json's name without its scope, else the directory's name; always a harness name. */
  name: string;
  bytes: Uint8Array;
  manifest: ManifestData;
  toolchain: Toolchain;
  /** Warnings (a build with errors throws). */
  diagnostics: Diagnostic[];
  /** The compiler's own report of the warnings, as it prints them. */
  text: string;
}

/** Where the compiler finds `@berm/guest` when the project has no node_modules of its own. */
const VIRTUAL_MODULES = '/@berm-guest-toolchain/node_modules';

interface Asc {
  main(argv: string[], options: Record<string, unknown>): Promise<{ error: Error | null; stderr: { toString(): string } }>;
  createMemoryStream(): { toString(): string };
}

/** DiagnosticCategory: pedantic, info, warning, error. */
const CATEGORY = ['info', 'info', 'warning', 'error'] as const;

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

export async function build(options: BuildOptions): Promise<BuildResult> {
  const dir = resolve(options.dir);
  if (!existsSync(join(dir, ENTRY))) {
    throw new GuestError(
      'no-entry',
      `${join(options.dir, ENTRY)} does not exist: a harness's entry is assembly/index.ts (crab new NAME writes a project)`,
      { dir: options.dir },
    );
  }
  // Checked before the compile, which takes seconds; unknown only when package.json is broken, which fails the compile.
  const packageText = await readFile(join(dir, 'package.json'), 'utf8').catch(() => null);
  const name = imageName(packageText, dir, options.dir);
  const toolchain = resolveToolchain(dir);
  const asc = (await import(pathToFileURL(join(toolchain.assemblyscript.dir, 'dist', 'asc.js')).href)) as { default: Asc } & Asc;
  const transformModule = (await import(pathToFileURL(join(toolchain.guest.dir, 'dist', 'transform', 'index.js')).href)) as {
    configure(options: BermTransformOptions): TransformClass;
  };
  // json-as's package main is its transform.
  const jsonAsMain = (JSON.parse(await readFile(join(toolchain.jsonAs.dir, 'package.json'), 'utf8')) as { main: string }).main;
  const jsonAs = (await import(pathToFileURL(join(toolchain.jsonAs.dir, jsonAsMain)).href)) as { default: TransformClass };
  const report: BuildReport = {};
  const Transform = transformModule.configure({ jsonAs: jsonAs.default, report });

  // The compiler reads relative to its base directory; json-as's transform joins that to the working
  // directory, so it is given relative.
  const baseDir = relative(process.cwd(), dir) || '.';
  const paths = [dirname(toolchain.jsonAs.dir)];
  if (toolchain.source === 'bundled') paths.push(VIRTUAL_MODULES);
  const argv = [
    ENTRY,
    '--baseDir',
    baseDir,
    '--outFile',
    'build/out.wasm',
    '--optimizeLevel',
    options.optimize ? '3' : '0',
    '--shrinkLevel',
    '0',
    '--noColors',
    // Any asconfig.json of the project would change options the ABI depends on (the runtime, exports).
    '--config',
    '/dev/null/asconfig.json',
    ...paths.flatMap((p) => ['--path', p]),
  ];
  const diagnostics: Diagnostic[] = [];
  const texts = new Map<string, string>();
  let bytes: Uint8Array | undefined;
  const stderr = asc.createMemoryStream();
  const readSource = async (filename: string, base: string): Promise<string | null> => {
    let file = resolve(base, filename);
    const virtual = `${VIRTUAL_MODULES}${sep}@berm${sep}guest${sep}`;
    if (file.startsWith(virtual)) file = join(toolchain.guest.dir, file.slice(virtual.length));
    try {
      const text = await readFile(file, 'utf8');
      texts.set(relative(dir, file).split(sep).join('/'), text);
      return text;
    } catch {
      return null;
    }
  };
  const result = await asc.main(argv, {
    stderr,
    stdout: asc.createMemoryStream(),
    readFile: readSource,
    writeFile: (name: string, contents: Uint8Array | string) => {
      if (name.endsWith('.wasm') && typeof contents !== 'string') bytes = contents;
    },
    listFiles: () => [],
    transforms: [Transform],
    reportDiagnostic: (d: {
      message: string;
      code: number;
      category: number;
      range: { start: number; source: { normalizedPath: string } | null } | null;
    }) => {
      const diagnostic: Diagnostic = { category: CATEGORY[d.category] ?? 'error', code: d.code, message: d.message };
      const file = d.range?.source?.normalizedPath;
      if (file !== undefined) {
        diagnostic.file = file;
        const text = texts.get(file);
        if (text !== undefined && d.range) Object.assign(diagnostic, lineAndColumn(text, d.range.start));
      }
      diagnostics.push(diagnostic);
    },
  });
  const errors = diagnostics.filter((d) => d.category === 'error');
  const text = ownReport(stderr.toString());
  if (result.error !== null || errors.length > 0 || bytes === undefined || report.manifest === undefined || name === undefined) {
    const count = errors.length;
    const why = count > 0 ? `${count} error${count === 1 ? '' : 's'}` : (result.error?.message ?? 'no module was produced');
    throw new GuestError('build-error', `${join(options.dir, ENTRY)} did not build: ${why}`, { diagnostics: errors, text });
  }
  return { name, bytes, manifest: report.manifest, toolchain, diagnostics: diagnostics.filter((d) => !d.file?.startsWith('~lib/')), text };
}

/**
 * The compiler's report, less its closing FAILURE line (the caller says what failed) and less the
 * warnings it gives about library code (json-as's own casts), which the harness's author can do nothing
 * about. Errors are kept wherever they are.
 */
function ownReport(stderr: string): string {
  return stderr
    .split(/\n{2,}/)
    .filter((block) => !/^FAILURE /.test(block) && !(/^WARNING /.test(block) && /└─ in ~lib\//.test(block)))
    .join('\n\n')
    .trim();
}
