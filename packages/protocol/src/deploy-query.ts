/**
 * The query of `PUT /harnesses/{name}`: `force`, `dry-run`, and the bindings the operator gives the
 * harness beside its image (the body stays the image, so a deploy is one request). Encoded by the
 * client, decoded by the daemon, here once so the two read the same parameters the same way.
 *
 * `timeout` is a duration, `max_memory` and `max_result_size` sizes, `max_concurrency` a count (units.ts); `grant` repeats, and
 * its values are read by the daemon against the image (see bermd's deploy/bindings.ts).
 */
import type { LimitBindings } from './api.js';
import { ApiError } from './errors.js';
import { MIN_MEMORY_BYTES, readCountLimit, readDurationLimit, readSizeLimit } from './units.js';

/** Every parameter a deploy takes, in the order its messages list them. */
export const DEPLOY_PARAMS = ['force', 'dry-run', 'timeout', 'max_memory', 'max_result_size', 'max_concurrency', 'grant'] as const;

/**
 * The query as JSON Schema, for a server that validates it before the decoder reads it: every
 * parameter but `grant` once, `grant` a list, nothing else. (Read with type coercion to arrays, a
 * single `grant` becomes a list of one.)
 */
export const DEPLOY_QUERY_SCHEMA = {
  type: 'object',
  properties: {
    force: { type: 'string' },
    'dry-run': { type: 'string' },
    timeout: { type: 'string' },
    max_memory: { type: 'string' },
    max_result_size: { type: 'string' },
    max_concurrency: { type: 'string' },
    grant: { type: 'array', items: { type: 'string' } },
  },
  additionalProperties: false,
} as const;

export function unknownParameterMessage(key: string): string {
  return `unknown query parameter ${key}; a deploy takes ${DEPLOY_PARAMS.join(', ')}`;
}

export function repeatedParameterMessage(key: string, times: number): string {
  return `query parameter ${key} is given ${times} times; give it once`;
}

/** What a deploy asks for, as the client's caller gives it. */
export interface DeployOptions {
  /** Deploy even when the new image breaks recent callers. */
  force?: boolean;
  /** Run every check and the compatibility gate and answer as the deploy would (or refuse as it would), storing and serving nothing. */
  dryRun?: boolean;
  /** The harness's own call time limit, below the daemon's: `500ms`, `10s`, `2m`, or a number of milliseconds. */
  timeout?: string | number;
  /** The harness's own memory cap, below the daemon's: `16M`, `512K`, or a number of bytes. */
  maxMemory?: string | number;
  /** The harness's own result size limit, below the daemon's: `256K`, or a number of bytes. */
  maxResultSize?: string | number;
  /** How many of the harness's calls may run at once, at most the daemon's. */
  maxConcurrency?: string | number;
  /**
   * What the harness is granted, when less than everything it declares: `syscall=berm.http.fetch`,
   * `berm.http.fetch=api.example.com`, `secret=example`, or `none`. Without grants, everything declared is.
   */
  grants?: string[];
}

/** `?force=true&timeout=...`, or `''` when nothing is asked. */
export function encodeDeployQuery(options: DeployOptions): string {
  const query = new URLSearchParams();
  if (options.force) query.set('force', 'true');
  if (options.dryRun) query.set('dry-run', 'true');
  if (options.timeout !== undefined) query.set('timeout', typeof options.timeout === 'number' ? `${options.timeout}ms` : options.timeout);
  if (options.maxMemory !== undefined) query.set('max_memory', String(options.maxMemory));
  if (options.maxResultSize !== undefined) query.set('max_result_size', String(options.maxResultSize));
  if (options.maxConcurrency !== undefined) query.set('max_concurrency', String(options.maxConcurrency));
  for (const grant of options.grants ?? []) query.append('grant', grant);
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

/** A deploy's query as the daemon reads it. */
export interface DeployRequest {
  force: boolean;
  /** Every check and the gate, nothing stored, served or announced. */
  dryRun: boolean;
  limits: LimitBindings;
  /** The `grant` values as given, in order; absent when none is. */
  grants?: string[];
}

/** A query as an HTTP server parses it: each parameter once (a string) or repeated (a list). */
export type ParsedQuery = Record<string, string | string[] | undefined>;

function one(query: ParsedQuery, key: string): string | undefined {
  const value = query[key];
  if (Array.isArray(value)) throw new ApiError('bad-request', repeatedParameterMessage(key, value.length));
  return value;
}

function flag(query: ParsedQuery, key: string): boolean {
  const value = one(query, key);
  if (value === undefined || value === 'false' || value === '0') return false;
  if (value === '' || value === 'true' || value === '1') return true;
  throw new ApiError('bad-request', `query parameter ${key}=${value}: expected true or false`);
}

function limit(query: ParsedQuery, key: string, read: (name: string, text: string) => number | string): number | undefined {
  const text = one(query, key);
  if (text === undefined) return undefined;
  const value = read(key, text);
  if (typeof value === 'string') throw new ApiError('bad-limit', value, { parameter: key });
  return value;
}

/**
 * Reads a deploy's query; throws `ApiError` 400 `bad-request` for a parameter it does not take (so a
 * misspelt grant never deploys with everything granted) or one given twice, and `bad-limit` for a
 * limit outside the grammar.
 */
export function decodeDeployQuery(query: ParsedQuery): DeployRequest {
  const force = flag(query, 'force');
  const dryRun = flag(query, 'dry-run');
  for (const key of Object.keys(query)) {
    if (!(DEPLOY_PARAMS as readonly string[]).includes(key)) {
      throw new ApiError('bad-request', unknownParameterMessage(key));
    }
  }
  const limits: LimitBindings = {};
  const timeout = limit(query, 'timeout', readDurationLimit);
  const memory = limit(query, 'max_memory', readSizeLimit);
  const result = limit(query, 'max_result_size', readSizeLimit);
  const concurrency = limit(query, 'max_concurrency', readCountLimit);
  if (memory !== undefined && memory < MIN_MEMORY_BYTES) {
    throw new ApiError('bad-limit', `max_memory ${memory}: must be at least 64K (one wasm page)`, { parameter: 'max_memory' });
  }
  if (timeout !== undefined) limits.timeout_ms = timeout;
  if (memory !== undefined) limits.max_memory_bytes = memory;
  if (result !== undefined) limits.max_result_bytes = result;
  if (concurrency !== undefined) limits.max_concurrency = concurrency;
  const grant = query.grant;
  if (grant === undefined) return { force, dryRun, limits };
  return { force, dryRun, limits, grants: Array.isArray(grant) ? grant : [grant] };
}
