// For the tests of the daemon's core in one process (the registry over a store, the metrics): a clock
// they set, the code of a refusal, and gauges with nothing to read.
import { expect } from 'vitest';
import { BermdError } from 'bermd';

/** A clock that ticks one second per reading, so every timestamp differs. */
export function ticking(start = Date.UTC(2026, 0, 1)): () => Date {
  let t = start;
  return () => new Date((t += 1000));
}

/** The `BermdError` `p` rejects with; fails when it resolves or rejects with anything else. */
export async function refusal(p: Promise<unknown>): Promise<BermdError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BermdError);
    return e as BermdError;
  }
  throw new Error('expected a refusal');
}

/** The code of the `BermdError` `p` rejects with; fails when it resolves or rejects with anything else. */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  return (await refusal(p)).code;
}

/** What the metrics' gauges read (`GaugeSources`) in a process with no pool, session or store behind them. */
export const idleGauges = {
  workersBusy: () => 0,
  queueDepths: () => new Map<string, number>(),
  sessions: () => 0,
  streams: () => ({ session: 0, listen: 0 }),
  store: () => ({ kind: 'directory' as const, reachable: true }),
};
