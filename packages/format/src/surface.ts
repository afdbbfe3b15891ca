import type { ManifestData, PromptSpec } from '@berm/manifest';
import type { Paint } from './paint.js';

/**
 * The Prompts and Resources sections of `crab inspect`, shown only when the image declares any, each
 * prompt as `name(arg, arg?)` (a `?` marks an optional argument, `~` one the program completes) and each
 * resource or template as its path, name and MIME type. `data` is already made printable.
 */
export function renderSurface(data: ManifestData, paint: Paint, heading: (title: string, count: number) => string): string[] {
  const out: string[] = [];
  const prompts = data.prompts ?? [];
  if (prompts.length > 0) {
    out.push('', heading('Prompts', prompts.length));
    for (const prompt of prompts)
      out.push(`  ${paint.bold(prompt.name)}(${promptArguments(prompt)})`, ...described(prompt.description, paint));
  }
  const resources = [
    ...(data.resources ?? []).map((r) => ({ ...r, template: false })),
    ...(data.resource_templates ?? []).map((r) => ({ ...r, template: true })),
  ];
  if (resources.length > 0) {
    out.push('', heading('Resources', resources.length));
    for (const r of resources) {
      const marks = [r.mimeType ? paint.dim(r.mimeType) : '', r.template ? paint.green('template') : ''].filter(Boolean);
      out.push(`  ${paint.bold(r.path)}  ${r.name}${marks.length ? `  ${marks.join('  ')}` : ''}`, ...described(r.description, paint));
    }
  }
  return out;
}

function promptArguments(prompt: PromptSpec): string {
  return prompt.arguments.map((a) => `${a.name}${a.required === true ? '' : '?'}${a.complete === true ? '~' : ''}`).join(', ');
}

function described(text: string, paint: Paint): string[] {
  return text ? text.split('\n').map((line) => paint.dim(`      ${line}`)) : [];
}
