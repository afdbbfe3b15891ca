/**
 * How a per-harness limit's flag text is read (`crab deploy`'s and `crab run`'s flags, setting-flags.ts):
 * by the setting's row of `@berm/protocol`, as bermd reads the deploy query, so a bad value is refused with
 * the daemon's words before anything is sent. Apart from the flags themselves, so that the fast path
 * (fast-path.ts) reads the same values without loading oclif.
 */
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

/** The text of one row's flag read as its value, under the setting's wire name (as the query's refusal names it). */
export function limitReader(row: HarnessSettingRow): (text: string) => number {
  return (text) => {
    const value = readSettingText(row, row.harness.wire, text);
    if (typeof value === 'object') throw new BadLimitFlag(value.refused, row.harness.wire);
    return value as number;
  };
}

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
