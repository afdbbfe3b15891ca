/** The daemon's limits when its operator sets none (`bermd --call-timeout` and the others), from their settings' rows. */
import os from 'node:os';
import { HARNESS_SETTINGS, SETTINGS, type Limits, type MachineDefault, type Setting } from '@berm/protocol';

const CORES = os.availableParallelism();

/**
 * How many calls entering through one harness run at once: as many as there are cores, so one harness
 * alone has the throughput of the whole machine (a limit of 1 cost a quarter of it, bench/mcp.js), while
 * beside a harness holding its calls spinning another's p99 stays within the target (bench/neighbours.js):
 * the workers left to the others are what keeps them served, and the scheduler shares the cores.
 */
export const DEFAULT_MAX_CONCURRENCY = Math.max(1, CORES);

/**
 * The worker pool for a per-harness limit of `maxConcurrency`: that many, plus half the cores (rounded up,
 * at least one) that a harness at its limit leaves to the others. 2 cores: 2 + 1; 4: 4 + 2; 8: 8 + 4
 * (with the default limit, piscina's own default size, one and a half times the cores).
 */
export function workersFor(maxConcurrency: number): number {
  return maxConcurrency + Math.max(1, Math.ceil(CORES / 2));
}

/** A row's default: its own value, or the one this machine gives it. */
export function settingDefault(row: Setting): number | string | boolean | undefined {
  const value = row.default;
  if (typeof value !== 'object') return value;
  return machineDefault(value.machine);
}

function machineDefault(kind: MachineDefault): number | undefined {
  switch (kind) {
    case 'cores':
      return DEFAULT_MAX_CONCURRENCY;
    case 'workers-for-concurrency':
      return workersFor(DEFAULT_MAX_CONCURRENCY);
    case 'state-dir':
      // A path, which the parser computes from the environment it is given.
      return undefined;
  }
}

/** The default of the row named `flag`, which holds a number. */
export function numberDefault(flag: string): number {
  const row = SETTINGS.find((r) => r.flag === flag);
  const value = row === undefined ? undefined : settingDefault(row);
  if (typeof value !== 'number') throw new Error(`no numeric setting --${flag}`);
  return value;
}

/**
 * 10 s a call, 64 MiB of guest memory, and 1 MiB of result: a result is JSON text a model will read, so
 * anything near that size is already far past what is useful in a context window, while the host holds
 * it several times over (guest memory, decoded string, parsed value, the MCP response). The same bound
 * applies to one host-call request.
 */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.fromEntries(
  HARNESS_SETTINGS.map((row) => [row.harness.wire, settingDefault(row) as number]),
) as unknown as Limits;

/** How deep `berm.call` may nest. */
export const DEFAULT_MAX_CALL_DEPTH = numberDefault('max-call-depth');

/**
 * How many calls one harness may have waiting for a worker. A waiting call holds its arguments (up to
 * the 4 MiB an /mcp body may be) and its request; more waiting than a few time limits' worth of calls
 * only turns a quick refusal into a slow timeout.
 */
export const DEFAULT_MAX_QUEUE = numberDefault('max-queue');

/**
 * How long a connection may take to send a request's head (its request line and headers), from when it
 * opens or from its previous answer; and to send a whole request, body included. A client sending a byte
 * now and then no longer holds a connection, and what it holds, for as long as it likes. Two minutes
 * carry a 64 MiB image over a slow link; an answer may take as long as it needs (a long call, a stream).
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = numberDefault('headers-timeout');
export const DEFAULT_REQUEST_TIMEOUT_MS = numberDefault('request-timeout');

/** On SIGTERM, how long what is under way (calls, deploys, requests) may take to finish before it is stopped. */
export const DEFAULT_SHUTDOWN_GRACE_MS = numberDefault('shutdown-grace');
