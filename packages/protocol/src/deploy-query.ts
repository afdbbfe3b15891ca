/**
 * The query of `PUT /harnesses/{name}`: `force`, `dry-run`, and the bindings the operator gives the
 * harness beside its image (the body stays the image, so a deploy is one request). Encoded by the
 * client, decoded by the daemon, here once so the two read the same parameters the same way.
 *
 * A limit's parameter is its setting's wire name, read by its row (settings.ts); `grant` repeats, and
 * its values are read by the daemon against the image (see bermd's deploy/bindings.ts).
 */
import type { DeploySource, LimitBindings, LimitName } from './api.js';
import { ApiError } from './errors.js';
import { readSettingText } from './setting-values.js';
import { HARNESS_SETTINGS, type HarnessSettingRow } from './settings.js';

const LIMIT_PARAMS: LimitName[] = HARNESS_SETTINGS.map((row) => row.harness.wire);

/** Every parameter a deploy takes, in the order its messages list them. */
export const DEPLOY_PARAMS: readonly string[] = ['force', 'dry-run', ...LIMIT_PARAMS, 'grant', 'source', 'source-digest'];

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
    source: { type: 'string' },
    'source-digest': { type: 'string' },
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
  /** The registry reference and manifest digest the image was pulled from, recorded with the deploy. */
  source?: DeploySource;
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
  if (options.source !== undefined) {
    query.set('source', options.source.reference);
    query.set('source-digest', options.source.digest);
  }
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
  /** Where the image came from, when the deploy says so. */
  source?: DeploySource;
}

/** The longest source reference a deploy records: a registry reference is far shorter. */
export const MAX_SOURCE_REFERENCE = 1024;

/** `source` and `source-digest`, given together: an `oci://` reference of printable characters and a sha256 digest. */
function source(query: ParsedQuery): DeploySource | undefined {
  const reference = one(query, 'source');
  const digest = one(query, 'source-digest');
  if (reference === undefined && digest === undefined) return undefined;
  if (reference === undefined || digest === undefined) {
    throw new ApiError('bad-request', 'query parameters source and source-digest go together: give both, or neither');
  }
  if (!reference.startsWith('oci://') || reference.length > MAX_SOURCE_REFERENCE || /[\u0000-\u0020\u007f-\u009f]/.test(reference)) {
    throw new ApiError(
      'bad-request',
      `query parameter source: expected an oci:// reference of at most ${MAX_SOURCE_REFERENCE} printable characters`,
    );
  }
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) {
    throw new ApiError('bad-request', 'query parameter source-digest: expected sha256: and 64 lower-case hex digits');
  }
  return { reference, digest };
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
  const from = source(query);
  const grant = query.grant;
  const request: DeployRequest = { force, dryRun, limits };
  if (grant !== undefined) request.grants = Array.isArray(grant) ? grant : [grant];
  if (from !== undefined) request.source = from;
  return request;
}
