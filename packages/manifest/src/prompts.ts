import { ManifestError } from './errors.js';
import type { ManifestData } from './types.js';

/**
 * The checks of prompts JSON Schema cannot express, over a manifest the schema accepted: prompt
 * names are unique, and so are the argument names of each prompt.
 */
export function checkPrompts(data: ManifestData): void {
  const fail = (path: string, problem: string): never => {
    throw new ManifestError('invalid-manifest', `invalid manifest at ${path}: ${problem}`, { path });
  };
  const prompts = new Map<string, number>();
  (data.prompts ?? []).forEach((prompt, index) => {
    const first = prompts.get(prompt.name);
    if (first !== undefined) fail(`/prompts/${index}/name`, `prompt name "${prompt.name}" is already used by /prompts/${first}`);
    prompts.set(prompt.name, index);
    const args = new Map<string, number>();
    prompt.arguments.forEach((argument, i) => {
      const before = args.get(argument.name);
      if (before !== undefined) {
        fail(
          `/prompts/${index}/arguments/${i}/name`,
          `prompt "${prompt.name}" names argument "${argument.name}" twice (also /prompts/${index}/arguments/${before})`,
        );
      }
      args.set(argument.name, i);
    });
  });
}
