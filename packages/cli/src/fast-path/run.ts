import { loadWork } from '../actions/index.js';
import { CommandContext } from '../context.js';
import { reportFailure, writeJson } from '../report.js';
import type { Reading } from './read.js';

/**
 * Runs the command a reading names as its oclif class would (base-command.ts): the same work with the
 * same context, its result printed for `--json` as `BaseCommand.logJson` prints it (only a result that
 * is there, as oclif's `_run` does), and a failure reported as `BaseCommand.catch` reports it.
 */
export async function runReading(reading: Reading, bin: string): Promise<void> {
  const context = new CommandContext({ bin, id: reading.id, json: reading.json });
  let result: unknown;
  try {
    const work = await loadWork(reading.id);
    result = await work(reading, context);
  } catch (e) {
    reportFailure(e, context);
    return;
  }
  if (result && reading.json) writeJson(result);
}
