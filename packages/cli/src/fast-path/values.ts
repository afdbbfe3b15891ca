import { HARNESS_SETTINGS } from '@berm/protocol';
import { HISTORY_LIMIT, integerReader, RECEIPTS_LIMIT, ROLLBACK_STEPS } from '../flag-values.js';
import { limitReader } from '../limit-values.js';

/** How a flag's text becomes its value; a throw means oclif refuses it, and the line is left to oclif to say so. */
export type ValueReader = (text: string) => unknown;

const limits: Record<string, ValueReader> = Object.fromEntries(HARNESS_SETTINGS.map((row) => [row.flag, limitReader(row)]));

/**
 * The flags whose value is not their text, by command id: the same readers the oclif flags apply
 * (limit-values.ts, flag-values.ts). oclif.manifest.json does not say which flags parse their text, so
 * this table does; test/fast-path.test.ts sets every flag of every command and compares the two readings,
 * so a flag that parses and is missing here fails there.
 */
export const VALUE_READERS: Readonly<Record<string, Readonly<Record<string, ValueReader>>>> = {
  deploy: limits,
  run: limits,
  history: { limit: integerReader(HISTORY_LIMIT) },
  receipts: { limit: integerReader(RECEIPTS_LIMIT) },
  rollback: { steps: integerReader(ROLLBACK_STEPS) },
};
