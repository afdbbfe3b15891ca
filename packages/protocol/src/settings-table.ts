/**
 * The README's table of what bermd bounds, written from the settings' rows (those with a `bound`), so its
 * defaults and flags are the parser's. `node scripts/settings-readme.js` writes it between the README's
 * markers; a test checks the README holds what this returns.
 */
import { SETTINGS, type Setting } from './settings.js';
import { describeSize } from './settings.js';
import { describeDuration } from './units.js';

export const SETTINGS_TABLE_START = '<!-- settings table: written by scripts/settings-readme.js from @berm/protocol SETTINGS -->';
export const SETTINGS_TABLE_END = '<!-- end of settings table -->';

function defaultText(row: Setting): string {
  const value = row.default;
  if (value === undefined) return 'none';
  if (typeof value === 'object')
    return value.machine === 'cores'
      ? 'the cores'
      : value.machine === 'workers-for-concurrency'
        ? '`--max-concurrency` + half the cores'
        : '-';
  if (typeof value !== 'number') return `\`${String(value)}\``;
  if (row.kind === 'duration') return describeDuration(value);
  if (row.kind === 'size') return describeSize(value);
  return value.toLocaleString('en-US');
}

function flagText(row: Setting): string {
  return row.harness === undefined ? `\`--${row.flag}\`` : `\`--${row.flag}\` (\`${row.harness.wire}\`)`;
}

/** The table, markers included. */
export function settingsTable(): string {
  const rows = (SETTINGS as readonly Setting[])
    .filter((row) => row.bound !== undefined)
    .map((row) => `| ${row.bound} | ${defaultText(row)} | ${flagText(row)} |`);
  return [SETTINGS_TABLE_START, '| bound | default | flag (deploy binding) |', '| --- | --- | --- |', ...rows, SETTINGS_TABLE_END].join(
    '\n',
  );
}
