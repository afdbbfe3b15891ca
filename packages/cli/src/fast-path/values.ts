import { HISTORY_LIMIT, integerReader, RECEIPTS_LIMIT, ROLLBACK_STEPS } from '../flag-values.js';

/** How a flag's text becomes its value; a throw means oclif refuses it, and the line is left to oclif to say so. */
export type ValueReader = (text: string) => unknown;

export type ValueReaders = Readonly<Record<string, ValueReader>>;

/** The per-harness limits' readers, by their settings' flag names, loaded only for the commands that take them. */
async function limits(): Promise<ValueReaders> {
  const [{ HARNESS_SETTINGS }, { limitReader }] = await Promise.all([import('@berm/protocol'), import('../limit-values.js')]);
  return Object.fromEntries(HARNESS_SETTINGS.map((row) => [row.flag, limitReader(row)]));
}

/**
 * The flags of command `id` whose value is not their text: the same readers the oclif flags apply
 * (limit-values.ts, flag-values.ts). oclif.manifest.json does not say which flags parse their text, so
 * this does; test/fast-path.test.ts sets every flag of every command and compares the two readings, so a
 * flag that parses and is missing here fails there.
 */
export async function valueReaders(id: string): Promise<ValueReaders> {
  switch (id) {
    case 'deploy':
    case 'run':
      return limits();
    case 'history':
      return { limit: integerReader(HISTORY_LIMIT) };
    case 'receipts':
      return { limit: integerReader(RECEIPTS_LIMIT) };
    case 'rollback':
      return { steps: integerReader(ROLLBACK_STEPS) };
    default:
      return {};
  }
}
