/**
 * The transform's afterCompile: checks the module against the project (checks.ts), shapes its exports
 * as the ABI wants them (module.ts), and embeds the manifest (manifest.ts).
 */
import type { ManifestData } from '@berm/manifest';
import type { Program } from 'assemblyscript';
import type { RenderedHarness } from './after-initialize.js';
import type { ParsedHarness } from './after-parse.js';
import { checkContent, checkEmits, checkImports, checkSecrets, declareAskSyscalls } from './checks.js';
import type { Diagnostics } from './diagnostics.js';
import { assembleManifest, embedManifest } from './manifest.js';
import { type Binaryen, type BinaryenModule, functionImports, shapeExports } from './module.js';

/** The compiled harness made an image: its manifest, or undefined when it could not be embedded. */
export function finishModule(
  binaryen: Binaryen,
  module: BinaryenModule,
  program: Program,
  parsed: ParsedHarness,
  rendered: RenderedHarness,
  diagnostics: Diagnostics,
): ManifestData | undefined {
  const { project } = parsed;
  checkEmits(program, new Set(rendered.events.map((e) => e.cls)), diagnostics);
  checkContent(program, rendered.tools, diagnostics);
  const imports = functionImports(binaryen, module);
  declareAskSyscalls(imports, project.deps, parsed.packageJson, diagnostics);
  checkImports(imports, project.deps, parsed.packageJson, diagnostics);
  checkSecrets(program, project.deps.secrets, diagnostics);
  const missing = shapeExports(
    binaryen,
    module,
    rendered.tools.map((t) => t.name),
    rendered.prompts.map((p) => p.name),
    rendered.surface,
  );
  for (const name of missing) diagnostics.error(null, `the glue of tool ${name} was not compiled`);
  const data = assembleManifest(
    project,
    rendered.tools,
    rendered.events.map((e) => e.spec),
    rendered.prompts,
    rendered.surface,
  );
  return embedManifest(module, data, diagnostics);
}
