// Writes the README's table of bounds from the settings' rows (@berm/protocol, built). Run after changing a row;
// packages/protocol/test/settings.test.ts fails while the README holds anything else.
import { readFileSync, writeFileSync } from 'node:fs';
import { SETTINGS_TABLE_END, SETTINGS_TABLE_START, settingsTable } from '@berm/protocol';

const file = new URL('../README.md', import.meta.url);
const text = readFileSync(file, 'utf8');
const start = text.indexOf(SETTINGS_TABLE_START);
const end = text.indexOf(SETTINGS_TABLE_END);
if (start < 0 || end < start) throw new Error(`README.md: the markers ${SETTINGS_TABLE_START} and ${SETTINGS_TABLE_END} are missing`);
writeFileSync(file, text.slice(0, start) + settingsTable() + text.slice(end + SETTINGS_TABLE_END.length));
