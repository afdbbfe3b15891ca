/**
 * `crab deploy`'s and `crab run`'s flags for a harness's own limits, one per per-harness setting of
 * `@berm/protocol`, each read by limit-values.ts.
 */
import * as Flags from '@oclif/core/flags';
import { HARNESS_SETTINGS, type HarnessSettingRow } from '@berm/protocol';
import { limitReader } from './limit-values.js';

const PLACEHOLDER: Record<HarnessSettingRow['kind'], string> = { duration: 'DURATION', size: 'SIZE', count: 'N' };

/** The flag of one row: its value as the row reads it. */
function limitFlag(row: HarnessSettingRow, lead = "this harness's own, at most the daemon's") {
  const read = limitReader(row);
  return Flags.custom<number>({
    description: `${lead}: ${row.help}`,
    helpValue: PLACEHOLDER[row.kind],
    // The query parameter's name read as a flag, where it differs, as an earlier crab spelt it.
    aliases: aliasOf(row),
    parse: async (text: string) => read(text),
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
