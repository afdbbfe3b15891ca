import { traceConfig, TraceConfigError, type TraceFlags } from './telemetry/index.js';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  HARNESS_SETTINGS,
  readSettingText,
  SETTINGS,
  SYSCALL,
  type HarnessSettingRow,
  type Limits,
  type Setting,
  type SettingRow,
  printDefault,
} from '@berm/protocol';
import { isLoopbackAddress, readAllowedHost } from './app/index.js';
import { AccessFileError, oauthUrlRefusal, readAccessFile, type AccessEntry, type IntrospectionClient } from './auth/index.js';
import { isPostgresUrl } from './deploy/index.js';
import { parseResolve, SERVABLE_SYSCALLS, Secrets, type ResolveEntry } from './egress/index.js';
import { isBadOption } from './error-table.js';
import { numberDefault, settingDefault, workersFor } from './limits.js';

export { USAGE } from './usage.js';

const PROXY = SYSCALL.httpProxy;

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7477;
export const DEFAULT_MAX_IMAGE_SIZE = numberDefault('max-image-size');
/** How long bermd waits at start for a store that does not answer (`--store-wait`). */
export const DEFAULT_STORE_WAIT_MS = numberDefault('store-wait');
export const DEFAULT_TOOL_SEPARATOR = '.';
/** Characters a tool separator may use: none of them is a letter or digit, so names stay readable. */
export const TOOL_SEPARATOR = /^[._/-]{1,8}$/;

/** What a row's value is in the daemon's options. */
type ValueOf<R extends Setting> = R['kind'] extends 'duration' | 'size' | 'count' | 'whole'
  ? number
  : R['kind'] extends 'boolean' | 'switch'
    ? boolean
    : R['kind'] extends 'list'
      ? string[]
      : string;

/** Rows the options hold as something richer than their text (an address, a token, parsed entries) or inside `limits`. */
type Composite = HarnessSettingRow | Extract<SettingRow, { flag: 'listen' | 'metrics-listen' | 'token-file' | 'resolve' }>;
type Plain = Exclude<SettingRow, Composite>;
/** The plain rows, by their names in code: those with a default always hold a value, the others may not. */
type FromRows = { [R in Plain as R extends { default: unknown } ? R['code'] : never]: ValueOf<R> } & {
  [R in Plain as R extends { default: unknown } ? never : R['code']]?: ValueOf<R>;
};

/**
 * The daemon's options: one member per setting (settings.ts, by its name in code), except where a
 * setting's text becomes something richer: `--listen` is `host` and `port`, `--token-file` the token it
 * holds, `--resolve` its entries, `--secrets` the secrets loaded (and `secretsFile` where from), and the
 * limits a deploy may set per harness are `limits`, by their wire names, the bounds every harness gets.
 */
export type DaemonOptions = FromRows & {
  host: string;
  port: number;
  /** `--metrics-listen`'s address: a second listener serving `/metrics` alone; undefined without the flag. */
  metricsListen?: { host: string; port: number };
  /** `--token-file`'s token, naming the principal `operator`; undefined when there is none. */
  token?: string;
  /** `--access`'s principals (and `accessFile`, where from); undefined when there is no file. */
  access?: AccessEntry[];
  /** `--oauth-introspection-client`'s credentials (and `oauthIntrospectionClientFile`, where from). */
  introspectionClient?: IntrospectionClient;
  /** The daemon's limits, what a harness without its own runs under and the most a deploy may give one. */
  limits: Limits;
  /** `--resolve` entries: declared names pointed at addresses. */
  resolve: ResolveEntry[];
  /** Secret values held for harnesses (`--secrets`); none by default. */
  secrets: Secrets;
};

export class OptionsError extends Error {
  readonly code = 'bad-option';
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

/** The per-user state directory, following the XDG base directory convention. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'bermd');
}

/** `HOST:PORT`, `[v6]:PORT` or `:PORT` (loopback), given to `flag`. */
export function parseListen(value: string, flag = 'listen'): { host: string; port: number } {
  const colon = value.lastIndexOf(':');
  if (colon < 0) throw new OptionsError(`--${flag} ${value}: expected HOST:PORT`);
  let host = value.slice(0, colon);
  const portText = value.slice(colon + 1);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '') host = DEFAULT_HOST;
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new OptionsError(`--${flag} ${value}: port must be 0 to 65535`);
  return { host, port };
}

/** `parseArgs`'s options, one per row: a switch is a boolean, a list repeats, every other value is text read by its row. */
const FLAGS = Object.fromEntries([
  ...SETTINGS.map((row: Setting) => [
    row.flag,
    row.kind === 'switch' ? { type: 'boolean' } : row.kind === 'list' ? { type: 'string', multiple: true } : { type: 'string' },
  ]),
  ['help', { type: 'boolean', short: 'h' }],
]) as Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

type Given = Record<string, string | boolean | string[] | undefined>;

/**
 * `--flag -1` as `--flag=-1`: parseArgs calls a value beginning with a dash ambiguous, but no flag begins
 * with a digit, so it is the flag's value (a negative number), which its row then refuses in its own words.
 */
function negativeValuesJoined(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (arg.startsWith('--') && FLAGS[arg.slice(2)]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

function readFlags(argv: string[]): Given {
  try {
    return parseArgs({ args: negativeValuesJoined(argv), strict: true, allowPositionals: false, options: FLAGS }).values as Given;
  } catch (e) {
    throw new OptionsError((e as Error).message);
  }
}

/** A row's value as given, read by the row, or its default. */
function valueOf(row: Setting, given: Given): number | boolean | string | string[] | undefined {
  const text = given[row.flag];
  if (text === undefined) return settingDefault(row);
  if (typeof text !== 'string') return text;
  const value = readSettingText(row, `--${row.flag}`, text);
  if (typeof value === 'object') throw new OptionsError(value.refused);
  return value;
}

function flagOf<F extends SettingRow['flag']>(flag: F): Extract<SettingRow, { flag: F }> {
  return SETTINGS.find((row) => row.flag === flag) as Extract<SettingRow, { flag: F }>;
}

export async function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<DaemonOptions | 'help'> {
  const given = readFlags(argv);
  if (given.help) return 'help';
  const plain: Record<string, unknown> = {};
  for (const row of SETTINGS as readonly Setting[]) plain[row.code] = valueOf(row, given);
  const listen = given.listen as string | undefined;
  const { host, port } = parseListen(listen ?? (flagOf('listen').default as string));
  const metricsListen =
    given['metrics-listen'] === undefined ? undefined : parseListen(given['metrics-listen'] as string, 'metrics-listen');
  if (given.store !== undefined && given.state !== undefined)
    throw new OptionsError('--state and --store each name where the deployed set is kept: give one');
  plain.stateDir = path.resolve((given.state as string | undefined) ?? defaultStateDir(env));
  const store = given.store === undefined ? undefined : parseStore(given.store as string);
  const storeOnly = SETTINGS.find((row) => 'storeOnly' in row && given[row.flag] !== undefined);
  if (store === undefined && storeOnly !== undefined) throw new OptionsError(`--${storeOnly.flag} applies to a --store database only`);
  const token = await readToken(given['token-file'] as string | undefined);
  const access = await readAccess(plain.accessFile as string | undefined);
  const introspectionClient = await readOAuth(plain);
  if (!isLoopbackAddress(host) && token === undefined && access === undefined && plain.oauthIssuer === undefined && !plain.insecureNoAuth) {
    throw new OptionsError(
      `--listen ${listen}: ${host} is reachable from other machines, and without --token-file, --access or --oauth-issuer anyone who reaches it can deploy images ` +
        "that run with the operator's secrets; give --token-file FILE, --access FILE or --oauth-issuer URL, or --insecure-no-auth to accept that risk",
    );
  }
  plain.allowedHosts = ((plain.allowedHosts as string[] | undefined) ?? []).map((value) => {
    const name = readAllowedHost(value);
    if (name === undefined)
      throw new OptionsError(`--allowed-host ${value}: expected a host name or address without a port (every port is accepted)`);
    return name;
  });
  const limits = Object.fromEntries(HARNESS_SETTINGS.map((row) => [row.harness.wire, plain[row.code]])) as Limits;
  if (given.workers === undefined) plain.workers = workersFor(limits.max_concurrency);
  const workers = plain.workers as number;
  if (workers <= limits.max_concurrency) {
    throw new OptionsError(
      `--workers ${workers}: must be more than --max-concurrency (${limits.max_concurrency}), or one harness at its limit would hold every worker`,
    );
  }
  // History names the replica each change went through: a blank name tells nobody which.
  if (given['replica-name'] !== undefined && (plain.replicaName as string).trim() === '')
    throw new OptionsError(
      `--replica-name ${JSON.stringify(plain.replicaName)}: give a name that tells this bermd from its replicas, or leave the flag out for the host name and process id`,
    );
  const resourceUris = plain.resourceUris as string;
  if (resourceUris !== 'berm' && resourceUris !== 'harness-scheme')
    throw new OptionsError(`--resource-uris ${JSON.stringify(resourceUris)}: use berm or harness-scheme`);
  const toolSeparator = plain.toolSeparator as string;
  if (!TOOL_SEPARATOR.test(toolSeparator))
    throw new OptionsError(`--tool-separator ${JSON.stringify(toolSeparator)}: use 1 to 8 of the characters . _ - /`);
  const serve = parseServe((plain.serve as string[] | undefined) ?? []);
  const httpProxy = given['http-proxy'] === undefined ? undefined : parseProxy(given['http-proxy'] as string);
  if (serve.includes(PROXY) && httpProxy === undefined)
    throw new OptionsError(`--serve ${PROXY} needs --http-proxy URL: it sends through the operator's proxy`);
  let resolve: ResolveEntry[];
  try {
    resolve = ((given.resolve as string[] | undefined) ?? []).map(parseResolve);
  } catch (e) {
    if (isBadOption(e)) throw new OptionsError(e.message);
    throw e;
  }
  const secretsFile = given.secrets as string | undefined;
  let secrets = Secrets.none();
  if (secretsFile !== undefined) {
    try {
      secrets = await Secrets.load(secretsFile);
    } catch (e) {
      if (isBadOption(e)) throw new OptionsError(e.message);
      throw e;
    }
  }
  // Traces' settings are read now, so one bermd cannot serve by is refused before it starts.
  try {
    traceConfig(plain as TraceFlags, env);
  } catch (e) {
    if (e instanceof TraceConfigError) throw new OptionsError(e.message);
    throw e;
  }
  // Node's HTTP server refuses a head's time longer than the whole request's.
  if ((plain.headersTimeoutMs as number) > (plain.requestTimeoutMs as number))
    throw new OptionsError(
      `--headers-timeout ${given['headers-timeout'] ?? printDefault(flagOf('headers-timeout'))}: must not be longer than --request-timeout (${plain.requestTimeoutMs} ms)`,
    );
  for (const row of HARNESS_SETTINGS) delete plain[row.code];
  delete plain.listen;
  delete plain.metricsListen;
  delete plain.tokenFile;
  return {
    ...(plain as FromRows),
    host,
    port,
    metricsListen,
    store,
    token,
    access,
    introspectionClient,
    limits,
    workers,
    serve,
    httpProxy,
    resolve,
    secrets,
    secretsFile,
  };
}

async function readToken(file: string | undefined): Promise<string | undefined> {
  if (file === undefined) return undefined;
  let token: string;
  try {
    token = (await readFile(file, 'utf8')).trim();
  } catch (e) {
    throw new OptionsError(`--token-file ${file}: ${(e as Error).message}`);
  }
  if (token === '') throw new OptionsError(`--token-file ${file}: the file is empty`);
  return token;
}

async function readAccess(file: string | undefined): Promise<AccessEntry[] | undefined> {
  if (file === undefined) return undefined;
  try {
    return await readAccessFile(file);
  } catch (e) {
    if (e instanceof AccessFileError) throw new OptionsError(e.message);
    throw e;
  }
}

/**
 * `--oauth-issuer`, `--resource` and `--oauth-introspection-client`, which go together: the issuer and the
 * resource each need the other, and introspection and the page's client need both. Answers the introspection client's
 * credentials, read from its file.
 */
async function readOAuth(plain: Record<string, unknown>): Promise<IntrospectionClient | undefined> {
  const issuer = plain.oauthIssuer as string | undefined;
  const resource = plain.resource as string | undefined;
  const clientFile = plain.oauthIntrospectionClientFile as string | undefined;
  if (issuer === undefined) {
    if (plain.oauthPageClient !== undefined)
      throw new OptionsError(
        `--oauth-page-client ${plain.oauthPageClient as string}: the page signs in through an authorization server; give --oauth-issuer URL and --resource URL too`,
      );
    if (resource !== undefined)
      throw new OptionsError(`--resource ${resource}: names this bermd to an authorization server; give --oauth-issuer URL too`);
    if (clientFile !== undefined)
      throw new OptionsError(`--oauth-introspection-client ${clientFile}: needs --oauth-issuer URL and --resource URL`);
    return undefined;
  }
  const refused =
    oauthUrlRefusal('--oauth-issuer', issuer, 'https://id.example.com') ??
    (resource === undefined ? undefined : oauthUrlRefusal('--resource', resource, 'https://berm.example.com/mcp'));
  if (refused !== undefined) throw new OptionsError(refused);
  if (resource === undefined)
    throw new OptionsError(
      `--oauth-issuer ${issuer}: needs --resource URL, this bermd's URI as the authorization server knows it (https://berm.example.com/mcp), which every token's audience must hold`,
    );
  if (clientFile === undefined) return undefined;
  let text: string;
  try {
    text = (await readFile(clientFile, 'utf8')).trim();
  } catch (e) {
    throw new OptionsError(`--oauth-introspection-client ${clientFile}: ${(e as Error).message}`);
  }
  // The id is what comes before the first colon, as in HTTP Basic (RFC 7617): an id holding a colon cannot be written here.
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1 || text.includes('\n'))
    throw new OptionsError(`--oauth-introspection-client ${clientFile}: expected one line CLIENT_ID:CLIENT_SECRET`);
  return { id: text.slice(0, colon), secret: text.slice(colon + 1) };
}

/** A PostgreSQL URL; its text (which may hold a password) is never quoted back. */
function parseStore(value: string, flag = '--store'): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || !isPostgresUrl(value) || url.hostname === '')
    throw new OptionsError(`${flag}: expected a PostgreSQL URL such as postgres://USER@HOST:5432/DB`);
  return value;
}

/** `--serve a,b --serve c`: each name one bermd can serve, each once. */
function parseServe(values: string[]): string[] {
  const out: string[] = [];
  for (const name of values.flatMap((v) => v.split(',')).map((v) => v.trim())) {
    if (name === '') continue;
    if (!SERVABLE_SYSCALLS.includes(name))
      throw new OptionsError(`--serve ${name}: bermd serves ${SERVABLE_SYSCALLS.join(' and ')} beyond the ABI's own host calls`);
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

function parseProxy(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OptionsError(`--http-proxy ${value}: expected a URL such as http://proxy.internal:3128`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OptionsError(`--http-proxy ${value}: the proxy is reached over http: or https:`);
  return url.href;
}

/** `bermd migrate-store`: a directory store moved into a PostgreSQL one. */
export interface MigrateStoreOptions {
  /** The state directory whose deployed set moves (the `--state` of the bermd that kept it). */
  from: string;
  /** The database it moves into (the `--store` of the replicas that will share it). */
  to: string;
}

export const MIGRATE_USAGE = `usage: bermd migrate-store --from DIR --to postgres://USER@HOST:PORT/DB

  Copies every harness kept in the state directory DIR (image, bindings, deploy time, usage) into the
  database; a name the database already holds is left as it is there, and DIR is left untouched.
  --from  the state directory of the bermd whose deployed set moves (its --state)
  --to    the PostgreSQL database the replicas will share (their --store)`;

export function parseMigrateOptions(argv: string[]): MigrateStoreOptions | 'help' {
  let values: { from?: string; to?: string; help?: boolean };
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { from: { type: 'string' }, to: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }).values;
  } catch (e) {
    throw new OptionsError((e as Error).message);
  }
  if (values.help) return 'help';
  if (values.from === undefined || values.to === undefined) throw new OptionsError('migrate-store needs --from DIR and --to URL');
  return { from: path.resolve(values.from), to: parseStore(values.to, '--to') };
}
