import type { Hook } from '@oclif/core/hooks';
import { CLIError } from '@oclif/core/errors';
import { distance } from 'fastest-levenshtein';

/**
 * oclif's `command_not_found` hook: a mistyped command is a usage error that names the command it was
 * probably meant to be. Written here rather than taken from @oclif/plugin-not-found, which asks
 * "did you mean …? (y/n)" on a terminal and runs the answer: a script typing a wrong command must fail
 * the same way on a terminal and off one. oclif imports a hook only when its event fires, so this
 * costs nothing to a command line that names a command.
 */
const hook: Hook<'command_not_found'> = async ({ id, config }) => {
  const typed = shown(id, config.topicSeparator);
  const guess = suggestion(
    id,
    config.commands.filter((c) => !c.hidden).map((c) => c.id),
  );
  const hint = guess === undefined ? '' : `; did you mean ${shown(guess, config.topicSeparator)}?`;
  throw new CLIError(`command ${typed} not found${hint}`);
};

export default hook;

/**
 * The command closest to `id`, when it is near enough to be a slip rather than another word. With a space
 * as the topic separator, oclif's `id` runs on into the arguments (`inspct:app.wasm`), so each command is
 * compared with as many of the typed words as it has.
 */
export function suggestion(id: string, ids: readonly string[]): string | undefined {
  const typed = id.split(':');
  let best: { id: string; edits: number } | undefined;
  for (const candidate of ids) {
    const words = candidate.split(':').length;
    if (candidate.length === 0 || typed.length < words) continue;
    const edits = distance(typed.slice(0, words).join(':'), candidate);
    // A third of the word, at least one edit: `inspct`, `deplyo`, `hsitory` are slips; `foo` is not `ls`.
    if (edits <= Math.max(1, Math.floor(candidate.length / 3)) && (best === undefined || edits < best.edits)) {
      best = { id: candidate, edits };
    }
  }
  return best?.id;
}

/** oclif keeps ids with `:`; the command line spells them with the topic separator (`registry login`). */
function shown(id: string, separator: string): string {
  return id.replaceAll(':', separator);
}
