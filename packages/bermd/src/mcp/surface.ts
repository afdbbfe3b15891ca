/**
 * A harness's prompts, resources and resource templates as MCP shows them, and the URIs they are
 * served at: `berm://{harness}/{path}`, or `{harness}://{path}` under `--resource-uris harness-scheme`
 * for a harness whose name is a URI scheme. A read accepts either form whichever is listed.
 */
import type { ManifestData, PromptSpec, ResourceSpec, ResourceTemplateSpec, TemplatePart } from '@berm/manifest';
import { matchTemplate, parseTemplate } from '@berm/manifest';

export type ResourceUris = 'berm' | 'harness-scheme';

/** What `prepare` keeps of a manifest's prompts, resources and templates (templates parsed once). */
export interface HarnessSurface {
  prompts: readonly PromptSpec[];
  resources: readonly ResourceSpec[];
  templates: ReadonlyArray<{ spec: ResourceTemplateSpec; parts: TemplatePart[] }>;
}

export const NO_SURFACE: HarnessSurface = { prompts: [], resources: [], templates: [] };

export function surfaceOf(manifest: ManifestData): HarnessSurface {
  const templates = (manifest.resource_templates ?? []).flatMap((spec) => {
    const parts = parseTemplate(spec.path);
    // The reader refused any other at deploy; an image restored from before is skipped rather than served wrong.
    return typeof parts === 'string' ? [] : [{ spec, parts }];
  });
  if (manifest.prompts === undefined && manifest.resources === undefined && templates.length === 0) return NO_SURFACE;
  return { prompts: manifest.prompts ?? [], resources: manifest.resources ?? [], templates };
}

const SCHEME = /^[A-Za-z][A-Za-z0-9-]*$/;

/** The URI `harness`'s resource at `path` is listed at. */
export function resourceUri(harness: string, path: string, uris: ResourceUris): string {
  return uris === 'harness-scheme' && SCHEME.test(harness) ? `${harness}://${path}` : `berm://${harness}/${path}`;
}

/** Both URIs `harness`'s resource at `path` answers to. */
export function resourceUris(harness: string, path: string): string[] {
  const own = resourceUri(harness, path, 'harness-scheme');
  const berm = resourceUri(harness, path, 'berm');
  return own === berm ? [berm] : [berm, own];
}

/** The harness and path a resource URI names, in either form, or undefined when it is neither. */
export function parseResourceUri(uri: string): { harness: string; path: string } | undefined {
  const berm = /^berm:\/\/([A-Za-z0-9_-]{1,64})\/(.+)$/.exec(uri);
  if (berm !== null) return { harness: berm[1]!, path: berm[2]! };
  const own = /^([A-Za-z][A-Za-z0-9-]{0,63}):\/\/(.+)$/.exec(uri);
  if (own !== null && own[1] !== 'berm') return { harness: own[1]!, path: own[2]! };
  return undefined;
}

/** What a path of a harness is: a declared resource, an instance of a declared template, or nothing. */
export type Resolved =
  | { kind: 'resource'; spec: ResourceSpec }
  | { kind: 'template'; spec: ResourceTemplateSpec; variables: Record<string, string> };

export function resolvePath(surface: HarnessSurface, path: string): Resolved | undefined {
  const spec = surface.resources.find((r) => r.path === path);
  if (spec !== undefined) return { kind: 'resource', spec };
  for (const template of surface.templates) {
    const variables = matchTemplate(template.parts, path);
    if (variables !== undefined) return { kind: 'template', spec: template.spec, variables };
  }
  return undefined;
}
