import type { ManifestData, PromptSpec } from '../types.js';
import type { Break } from './codes.js';
import { oneLine } from './describe.js';

function promptBreaks(old: PromptSpec, next: PromptSpec | undefined): Break[] {
  const owner = { prompt: old.name };
  if (next === undefined) return [{ code: 'prompt-removed', ...owner, path: '', message: `prompt \`${old.name}\` was removed` }];
  const before = new Map(old.arguments.map((a) => [a.name, a]));
  const out: Break[] = [];
  next.arguments.forEach((argument, index) => {
    if (argument.required !== true || before.get(argument.name)?.required === true) return;
    const was = before.has(argument.name) ? 'was optional' : 'is new';
    out.push({
      code: 'prompt-argument-required',
      ...owner,
      path: `/arguments/${index}`,
      message: oneLine(`argument \`${argument.name}\` of prompt \`${old.name}\` ${was} and is now required`),
    });
  });
  return out;
}

/**
 * The ways `next`'s prompts, resources and templates break a client of `old`'s: a prompt gone, a
 * prompt argument a client could leave out that it must now give, a resource or template gone.
 * Additions break nothing; a changed description, MIME type or completion breaks nothing either.
 */
export function surfaceBreaks(old: ManifestData, next: ManifestData): Break[] {
  const out: Break[] = [];
  const nextPrompts = new Map((next.prompts ?? []).map((p) => [p.name, p]));
  for (const prompt of old.prompts ?? []) out.push(...promptBreaks(prompt, nextPrompts.get(prompt.name)));
  const paths = new Set([...(next.resources ?? []), ...(next.resource_templates ?? [])].map((r) => r.path));
  for (const [kind, list] of [
    ['resource', old.resources],
    ['resource template', old.resource_templates],
  ] as const) {
    for (const resource of list ?? []) {
      if (paths.has(resource.path)) continue;
      out.push({
        code: 'resource-removed',
        resource: resource.path,
        path: '',
        message: oneLine(`${kind} \`${resource.path}\` was removed`),
      });
    }
  }
  return out;
}
