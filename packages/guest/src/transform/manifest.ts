/** The harness's manifest, assembled from the project and what was rendered, and embedded in the module. */
import {
  ABI_VERSION,
  Manifest,
  manifestRecords,
  SECTION_NAME,
  type EventSpec,
  type ManifestData,
  type PromptSpec,
  type ResourceSpec,
  type ResourceTemplateSpec,
  type ToolSpec,
} from '@berm/manifest';
import type { Diagnostics } from './diagnostics.js';
import type { BinaryenModule } from './module.js';
import type { Project } from './project.js';

export function assembleManifest(
  project: Project,
  tools: readonly ToolSpec[],
  events: readonly EventSpec[],
  prompts: readonly PromptSpec[] = [],
  surface: { resources: readonly ResourceSpec[]; templates: readonly ResourceTemplateSpec[] } = { resources: [], templates: [] },
): ManifestData {
  const data: ManifestData = {
    abi_version: ABI_VERSION,
    version: project.version,
    description: project.description,
    homepage: project.homepage,
    repository: project.repository,
    readme: project.readme,
    usage: project.usage,
    tools: [...tools],
    events: [...events],
    deps: project.deps,
  };
  // A harness without prompts or resources declares none, so its manifest reads as it did before prompts were.
  if (prompts.length > 0) data.prompts = [...prompts];
  if (surface.resources.length > 0) data.resources = [...surface.resources];
  if (surface.templates.length > 0) data.resource_templates = [...surface.templates];
  return data;
}

/** Validates `data` and adds it to `module` as the `.berm.abi` section; undefined, after an error, when it is not valid. */
export function embedManifest(module: BinaryenModule, data: ManifestData, diagnostics: Diagnostics): ManifestData | undefined {
  let manifest: Manifest;
  try {
    manifest = Manifest.fromJSON(data);
  } catch (e) {
    diagnostics.error(null, `the manifest rendered for this harness is not valid: ${(e as Error).message}`);
    return undefined;
  }
  const records = manifestRecords(manifest.data);
  module.addCustomSection(SECTION_NAME, new TextEncoder().encode(records.join('\n')));
  return manifest.toJSON();
}
