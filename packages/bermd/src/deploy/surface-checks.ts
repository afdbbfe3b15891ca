import type { ManifestData } from '@berm/manifest';
import { COMPLETE_EXPORT, promptExport, RESOURCE_READ_EXPORT } from '@berm/protocol';

/**
 * The exports a manifest's prompts, resources and completions need, each with what needs it: one per
 * prompt, `berm_resource_read` when it declares a resource or template, `berm_complete` when a prompt
 * argument or a template variable is declared `complete`. Each has a tool's signature.
 */
export function surfaceExports(data: ManifestData): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const prompt of data.prompts ?? []) out.push([promptExport(prompt.name), `which the manifest's prompt ${prompt.name} needs`]);
  const resources = (data.resources?.length ?? 0) + (data.resource_templates?.length ?? 0);
  if (resources > 0) out.push([RESOURCE_READ_EXPORT, 'which reads the resources the manifest declares']);
  const completes =
    (data.prompts ?? []).some((p) => p.arguments.some((a) => a.complete === true)) ||
    (data.resource_templates ?? []).some((t) => (t.complete?.length ?? 0) > 0);
  if (completes)
    out.push([COMPLETE_EXPORT, 'which completes the prompt arguments and template variables the manifest declares "complete"']);
  return out;
}
