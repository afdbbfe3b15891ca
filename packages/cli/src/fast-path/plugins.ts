/**
 * Whether the command line starts with a command or topic of crab's own (`own`: the root plugin's ids and
 * topics), or with `--version`. bin/run.js loads the plugins package.json lists only when it does not, and
 * the fast path's help and did-you-mean read the commands oclif would then hold. `autocomplete` is the
 * plugin's topic, though crab adds `autocomplete fish` to it: the fish script lists the plugin's commands
 * too, as the plugin's own scripts do.
 */
export function namesOwnCommand(args: readonly string[], own: { commandIDs: readonly string[]; topics: readonly string[] }): boolean {
  const first = args[0];
  if (first === '--version' || first === '-v') return true;
  if (first === 'autocomplete') return false;
  return first !== undefined && (own.commandIDs.includes(first) || own.topics.includes(first));
}
