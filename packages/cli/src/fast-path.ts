/**
 * The command line `bin/run.js` answers without oclif: exactly `inspect --json IMAGE` (or
 * `inspect IMAGE --json`), which scripts and CI run in loops, so its start-up is what counts. Loading
 * @oclif/core and its config alone costs more than twice a bare `node -e 0` (bench/cli.js measures the
 * whole command), so that one shape skips it and calls what the command's `--json` path calls (inspect-json.ts).
 *
 * This is a second reading of argv beside oclif's. It takes only shapes oclif reads the same way (the
 * `inspect` command, its IMAGE, `--json`, nothing else), and declines anything else, which then goes
 * through oclif. test/fast-path.test.ts holds it to oclif's own parser over the shapes it accepts and the
 * near misses it declines, so an oclif upgrade that reads them differently fails there.
 */

/** The IMAGE of `inspect --json IMAGE` or `inspect IMAGE --json`, and of nothing else. */
export function plainInspectJsonImage(args: readonly string[]): string | undefined {
  if (args.length !== 3 || args[0] !== 'inspect') return undefined;
  const rest = args.slice(1);
  const operands = rest.filter((a) => a !== '--json');
  return rest.length - operands.length === 1 && !operands[0]!.startsWith('-') ? operands[0] : undefined;
}
