/**
 * The query of `PUT /harnesses/{name}`: `force`, `dry-run`, and the bindings the operator gives the
 * harness beside its image (the body stays the image, so a deploy is one request). Encoded by the
 * client, decoded by the daemon, here once so the two read the same parameters the same way.
 *
 * A limit's parameter is its setting's wire name, read by its row (settings.ts); `grant` repeats, and
 * its values are read by the daemon against the image (see bermd's deploy/bindings.ts).
 */
import type { LimitBindings, LimitName } from './api.js';
import { ApiError } from './errors.js';
import { readSettingText } from './setting-values.js';
import { HARNESS_SETTINGS, type HarnessSettingRow } from './settings.js';

const LIMIT_PARAMS: LimitName[] = HARNESS_SETTINGS.map((row) => row.harness.wire);

/** Every parameter a deploy takes, in the order its messages list them. */
export const DEPLOY_PARAMS: readonly string[] = ['force', 'dry-run', ...LIMIT_PARAMS, 'grant'];

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
    ...Object.fromEntries(LIMIT_PARAMS.map((name) => [name, { type: 'string' }])),
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

/**
 * A harness's own limits, by their names in code, each at most the daemon's: a text in its setting's
 * grammar (`500ms`, `16M`, `2`), or a number (of milliseconds for a duration, bytes for a size).
 */
export type DeployLimitOptions = { [R in HarnessSettingRow as R['code']]?: string | number };

/** What a deploy asks for, as the client's caller gives it. */
export interface DeployOptions extends DeployLimitOptions {
  /** Deploy even when the new image breaks recent callers. */
  force?: boolean;
  /** Run every check and the compatibility gate and answer as the deploy would (or refuse as it would), storing and serving nothing. */
  dryRun?: boolean;
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
  for (const row of HARNESS_SETTINGS) {
    const value = options[row.code];
    if (value === undefined) continue;
    query.set(row.harness.wire, typeof value === 'number' && row.kind === 'duration' ? `${value}ms` : String(value));
  }
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

function limit(query: ParsedQuery, row: HarnessSettingRow): number | undefined {
  const key = row.harness.wire;
  const text = one(query, key);
  if (text === undefined) return undefined;
  const value = readSettingText(row, key, text);
  if (typeof value === 'object') throw new ApiError('bad-limit', value.refused, { parameter: key });
  return value as number;
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
    if (!DEPLOY_PARAMS.includes(key)) {
      throw new ApiError('bad-request', unknownParameterMessage(key));
    }
  }
  const limits: LimitBindings = {};
  for (const row of HARNESS_SETTINGS) {
    const value = limit(query, row);
    if (value !== undefined) limits[row.harness.wire] = value;
  }
  const grant = query.grant;
  if (grant === undefined) return { force, dryRun, limits };
  return { force, dryRun, limits, grants: Array.isArray(grant) ? grant : [grant] };
}
