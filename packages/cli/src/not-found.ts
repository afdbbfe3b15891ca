import { distance } from 'fastest-levenshtein';

/**
 * What a mistyped command is told: the command it names was not found, and the command it was probably
 * meant to be. oclif's `command_not_found` hook (hooks/command-not-found.ts) throws it, and the fast path
 * (fast-path/help.ts) reports it, from oclif's own reading of the command id in both.
 */
export function notFoundMessage(id: string, commands: readonly { id: string; hidden?: boolean }[], separator: string): string {
  const guess = suggestion(
    id,
    commands.filter((c) => !c.hidden).map((c) => c.id),
  );
  const hint = guess === undefined ? '' : `; did you mean ${shown(guess, separator)}?`;
  return `command ${shown(id, separator)} not found${hint}`;
}

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
