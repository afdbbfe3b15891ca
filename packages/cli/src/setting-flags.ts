/**
 * `crab deploy`'s flags for a harness's own limits, one per per-harness setting of `@berm/protocol`:
 * each reads its text by the setting's row, as bermd reads the deploy query, so a bad value is refused
 * with the daemon's words before anything is sent.
 */
import * as Flags from '@oclif/core/flags';
import { type DeployLimitOptions, HARNESS_SETTINGS, readSettingText, type HarnessSettingRow } from '@berm/protocol';

/**
 * A value the row refuses: `bad-limit` (exit 2), worded as bermd's answer to the same deploy query. Its
 * message is fixed, because oclif rewrites a parser's error message ("Parsing --flag ... See more help")
 * and the refusal must read the same on both sides of the wire.
 */
class BadLimitFlag extends Error {
  readonly code = 'bad-limit';
  readonly parameter: string;
  readonly #refused: string;
  constructor(refused: string, parameter: string) {
    super();
    this.name = 'BadLimitFlag';
    this.#refused = refused;
    this.parameter = parameter;
  }
  override get message(): string {
    return this.#refused;
  }
  override set message(_rewritten: string) {}
  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.#refused, parameter: this.parameter };
  }
}

const PLACEHOLDER: Record<HarnessSettingRow['kind'], string> = { duration: 'DURATION', size: 'SIZE', count: 'N' };

/** The flag of one row: its value as the row reads it, under the setting's wire name (as the query's refusal names it). */
function limitFlag(row: HarnessSettingRow, lead = "this harness's own, at most the daemon's") {
  return Flags.custom<number>({
    description: `${lead}: ${row.help}`,
    helpValue: PLACEHOLDER[row.kind],
    // The query parameter's name read as a flag, where it differs, as an earlier crab spelt it.
    aliases: aliasOf(row),
    parse: async (text: string) => {
      const value = readSettingText(row, row.harness.wire, text);
      if (typeof value === 'object') throw new BadLimitFlag(value.refused, row.harness.wire);
      return value as number;
    },
  })();
}

function aliasOf(row: HarnessSettingRow): string[] {
  const dashed = row.harness.wire.replaceAll('_', '-');
  return dashed === row.flag ? [] : [dashed];
}

/** Every per-harness limit's flag, by its setting's flag name. */
export const limitFlags: Record<string, ReturnType<typeof limitFlag>> = Object.fromEntries(
  HARNESS_SETTINGS.map((row) => [row.flag, limitFlag(row)]),
);

/** The same flags for `crab run`, which sets the limits itself in a daemon's stead (the daemon's defaults when unset). */
export const runLimitFlags: Record<string, ReturnType<typeof limitFlag>> = Object.fromEntries(
  HARNESS_SETTINGS.map((row) => [row.flag, limitFlag(row, "the run's limit, bermd's default when unset")]),
);

/** The limits given as flags, by their settings' wire names, as the runtime's limits are written. */
export function limitWireValues(flags: Record<string, unknown>): Partial<Record<HarnessSettingRow['harness']['wire'], number>> {
  const out: Partial<Record<HarnessSettingRow['harness']['wire'], number>> = {};
  for (const row of HARNESS_SETTINGS) {
    const value = flags[row.flag];
    if (typeof value === 'number') out[row.harness.wire] = value;
  }
  return out;
}

/** The limits given as flags, by their settings' names in code, as the client's deploy takes them. */
export function limitOptions(flags: Record<string, unknown>): DeployLimitOptions {
  const out: DeployLimitOptions = {};
  for (const row of HARNESS_SETTINGS) {
    const value = flags[row.flag];
    if (typeof value === 'number') out[row.code] = value;
  }
  return out;
}
