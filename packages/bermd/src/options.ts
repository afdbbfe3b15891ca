import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MIN_MEMORY_BYTES, parseDuration, readCountLimit, readDurationLimit, readSizeLimit, SYSCALL, type Limits } from '@berm/protocol';
import { isLoopbackAddress, readAllowedHost } from './app/index.js';
import { MAX_EVENT_STREAMS } from './control/index.js';
import {
  DEFAULT_BREAKS_WINDOW_MS,
  DEFAULT_RECONCILE_INTERVAL_MS,
  DEFAULT_STORE_TIMEOUT_MS,
  isPostgresUrl,
  MAX_STORE_TIMEOUT_MS,
  parseWindow,
} from './deploy/index.js';
import { DEFAULT_HTTP_MAX_BODY, parseResolve, SERVABLE_SYSCALLS, Secrets, type ResolveEntry } from './egress/index.js';
import { isBadOption } from './error-table.js';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_LIMITS,
  DEFAULT_MAX_CALL_DEPTH,
  DEFAULT_MAX_QUEUE,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_GRACE_MS,
  workersFor,
} from './limits.js';
import { MAX_LISTENS, MAX_MCP_BODY, MAX_SESSIONS, SESSION_IDLE_MS } from './mcp/index.js';

const PROXY = SYSCALL.httpProxy;

export const DEFAULT_PORT = 7477;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_MAX_IMAGE_SIZE = 64 * 1024 * 1024;
/** How long bermd waits at start for a store that does not answer (`--store-wait`). */
export const DEFAULT_STORE_WAIT_MS = 60_000;
export const DEFAULT_TOOL_SEPARATOR = '.';
/** Characters a tool separator may use: none of them is a letter or digit, so names stay readable. */
export const TOOL_SEPARATOR = /^[._/-]{1,8}$/;

export interface DaemonOptions {
  host: string;
  port: number;
  stateDir: string;
  /** A PostgreSQL URL (`--store`): the deployed set is kept there, shared with every replica using it; else in `stateDir`. */
  store?: string;
  /** With `store`: how long to wait at start for a database that does not answer, before exiting 1. */
  storeWaitMs: number;
  /** With `store`: how often the deployed set is compared with the database's, for notifications missed; 0 never. */
  reconcileIntervalMs: number;
  /** With `store`: how long a connection or a statement may go unanswered before the database counts as out of reach. */
  storeTimeoutMs: number;
  maxImageSize: number;
  /** The bearer token every request must carry; undefined when auth is off. */
  token?: string;
  /** Names requests may address bermd by (and web pages come from) besides the loopback ones and the listening address. */
  allowedHosts: string[];
  /** Listening beyond loopback without a token was asked for explicitly (`--insecure-no-auth`). */
  insecureNoAuth: boolean;
  logLevel: string;
  /**
   * The daemon's limits, what a harness without its own runs under and the most a deploy may give one:
   * the wall-clock limit of one tool call (nested calls included), the most memory one guest instance
   * may have (an image starting above it is refused at deploy), and the longest result a tool may
   * answer (and host-call request a guest may make), and how many calls entering through one harness may
   * run at once.
   */
  limits: Limits;
  /** Worker threads running tool calls: always more than `limits.max_concurrency`, so a harness at its limit leaves some to others. */
  workers: number;
  /** How many calls one harness may have waiting for a worker; past that a call is refused as busy. */
  maxQueue: number;
  /** How deep `berm.call` may nest; 0 refuses the first nested call. */
  maxCallDepth: number;
  /** Between harness and tool in MCP tool names. */
  toolSeparator: string;
  /** How recent a use must be for a break of it to refuse a redeploy; 0 turns the gate off. */
  breaksWindowMs: number;
  /** Syscalls beyond the ABI's own this daemon serves (`--serve`); none by default. */
  serve: string[];
  /** The operator's HTTP proxy, through which `berm.http.proxy` sends. */
  httpProxy?: string;
  /** `--resolve` entries: declared names pointed at addresses. */
  resolve: ResolveEntry[];
  /** Secret values held for harnesses (`--secrets`); none by default. */
  secrets: Secrets;
  /** The file they were read from, read again on SIGHUP. */
  secretsFile?: string;
  /** How long calls under way at SIGTERM may take to finish before they are stopped. */
  shutdownGraceMs: number;
  /** The longest response body handed to a guest by the HTTP syscalls. */
  httpMaxBodyBytes: number;
  /** An MCP session with no request under way and no stream open for this long is closed. */
  sessionIdleMs: number;
  /** The most MCP sessions held at once. */
  maxSessions: number;
  /** The largest request body /mcp accepts. */
  mcpMaxBody: number;
  /** How long a connection may take to send a request head (and stay idle between requests). */
  headersTimeoutMs: number;
  /** How long a connection may take to send a whole request, body included. */
  requestTimeoutMs: number;
  /** The most 2026-07-28 `subscriptions/listen` streams open at once; one more is refused. */
  maxListens: number;
  /** The most `GET /events` streams open at once; one more is refused (503 `event-stream-cap`). */
  maxEventStreams: number;
  /** /mcp's measured departures from the SDK (the fast path and its routing); false sends every request through the SDK. */
  mcpFastPath: boolean;
}

export class OptionsError extends Error {
  readonly code = 'bad-option';
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

export const USAGE = `usage: bermd [--listen HOST:PORT] [--state DIR | --store postgres://USER@HOST:PORT/DB] [--store-wait DURATION] [--reconcile-interval DURATION]
             [--store-timeout DURATION]
             [--max-image-size N[K|M|G]] [--token-file FILE] [--log-level LEVEL] [--allowed-host NAME]... [--insecure-no-auth]
             [--call-timeout DURATION] [--max-memory N[K|M|G]] [--max-result-size N[K|M|G]] [--max-call-depth N] [--tool-separator SEP]
             [--max-concurrency N] [--workers N] [--max-queue N]
             [--breaks-window DURATION] [--serve SYSCALL[,SYSCALL]] [--http-proxy URL] [--resolve HOST:PORT:ADDRESS]...
             [--secrets FILE] [--http-max-body N[K|M|G]] [--session-idle DURATION] [--max-sessions N] [--max-listens N] [--max-event-streams N]
             [--mcp-max-body N[K|M|G]] [--mcp-fast-path true|false]
             [--headers-timeout DURATION] [--request-timeout DURATION] [--shutdown-grace DURATION]
       bermd migrate-store --from DIR --to postgres://USER@HOST:PORT/DB   (moves a directory store in; --help says more)

  --listen          address to bind (default ${DEFAULT_HOST}:${DEFAULT_PORT}; port 0 picks a free one)
  --state           directory holding the deployed set (default $XDG_STATE_HOME/bermd or ~/.local/state/bermd)
  --store           a PostgreSQL database holding the deployed set instead, shared by every bermd pointed at it (replicas)
  --store-wait      how long to wait at start for the database to answer before exiting 1: 60s, 5m; 0 tries once (default 60s)
  --reconcile-interval how often to compare the deployed set with the database's, for changes whose notice was missed (default 30s; 0 never)
  --store-timeout   how long the database may take to answer a connection or a statement before what needs it is answered 503 (default 10s)
  --max-image-size  largest image a deploy accepts, in bytes (default 64M)
  --token-file      file holding a bearer token every request must carry (default: no auth); required to listen beyond loopback
  --allowed-host    a name requests may address bermd by besides localhost, 127.0.0.0/8 and [::1], e.g. a reverse proxy's (repeatable)
  --insecure-no-auth  listen on a non-loopback address without --token-file: anyone who can reach the port deploys and calls
  --log-level       pino level for the structured log on stderr (default info)
  --call-timeout    wall-clock limit of one tool call, nested calls included: 500ms, 10s, 2m; a bare number is seconds (default 10s)
  --max-memory      most memory one guest instance may have (default 64M); an image starting above it is refused at deploy
  --max-result-size longest result a tool may answer (default 1M)
  --max-call-depth  how deep berm.call may nest; 0 refuses the first nested call (default ${DEFAULT_MAX_CALL_DEPTH})
  --max-concurrency how many calls entering through one harness run at once; the others wait their turn (default ${DEFAULT_LIMITS.max_concurrency}, the cores)
  --workers         worker threads running calls, more than --max-concurrency (default: --max-concurrency plus half the cores, at least 1 more)
  --max-queue       how many calls one harness may have waiting for a worker; past that a call is refused as busy (default ${DEFAULT_MAX_QUEUE})
  --tool-separator  between harness and tool in MCP tool names, from . _ - / (default ${DEFAULT_TOOL_SEPARATOR})
  --breaks-window   a redeploy that breaks a tool or event used this recently is refused unless forced: 30d, 12h, 90m; a bare number is seconds; 0 refuses none (default 30d)
  --serve           syscalls beyond the ABI's own to serve, from ${SERVABLE_SYSCALLS.join(', ')} (default: none)
  --http-proxy      the proxy berm.http.proxy sends through (http://HOST:PORT); required to serve berm.http.proxy
  --resolve         HOST:PORT:ADDRESS: direct requests to HOST on PORT connect to ADDRESS (repeatable, as curl's)
  --secrets         JSON file of secrets for {secret:NAME} in request headers; must not be readable by group or others; SIGHUP reads it again
  --http-max-body   longest response body a guest is handed; longer ones are cut and marked truncated (default 1M)
  --session-idle    an MCP session with no request under way and no stream open this long is closed: 30m, 90s (default 30m)
  --max-sessions    most MCP sessions held at once; at the cap the least recently used idle one is closed, and when all are in use a new one is refused (default ${MAX_SESSIONS})
  --max-listens     most MCP 2026-07-28 listen streams open at once; one more is refused (default ${MAX_LISTENS})
  --max-event-streams most GET /events streams open at once; one more is refused with 503 event-stream-cap (default ${MAX_EVENT_STREAMS})
  --mcp-max-body    largest request body /mcp accepts (default 4M); a tool's arguments and a little framing
  --mcp-fast-path   false sends every /mcp request through the MCP SDK, to compare with the measured fast path (default true)
  --headers-timeout how long a connection may take to send a request's headers, or sit idle between requests (default 10s)
  --request-timeout how long a connection may take to send a whole request, body included (default 2m); answers may take longer
  --shutdown-grace  on SIGTERM, how long calls and requests under way may take to finish before they are stopped (default 10s);
                    a second SIGTERM or SIGINT meanwhile exits at once (143 or 130)`;

/** The per-user state directory, following the XDG base directory convention. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'bermd');
}

/** `HOST:PORT`, `[v6]:PORT` or `:PORT` (loopback). */
export function parseListen(value: string): { host: string; port: number } {
  const colon = value.lastIndexOf(':');
  if (colon < 0) throw new OptionsError(`--listen ${value}: expected HOST:PORT`);
  let host = value.slice(0, colon);
  const portText = value.slice(colon + 1);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '') host = DEFAULT_HOST;
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new OptionsError(`--listen ${value}: port must be 0 to 65535`);
  return { host, port };
}

function size(value: string, flag: string): number {
  const bytes = readSizeLimit(flag, value);
  if (typeof bytes === 'string') throw new OptionsError(bytes);
  return bytes;
}

function duration(value: string, flag: string): number {
  const ms = readDurationLimit(flag, value);
  if (typeof ms === 'string') throw new OptionsError(ms);
  return ms;
}

/** A count of at least one, as a deploy's `max_concurrency` reads it (units.ts). */
function count(value: string, flag: string): number {
  const n = readCountLimit(flag, value);
  if (typeof n === 'string') throw new OptionsError(n);
  return n;
}

/** A duration where 0 means none (no wait, never). */
function durationOrNone(value: string, flag: string): number {
  return parseDuration(value) === 0 ? 0 : duration(value, flag);
}

/** A whole number where 0 means something (no call waits, no nested call), which a count refuses. */
function wholeNumber(value: string, flag: string): number {
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(Number(value)))
    throw new OptionsError(`${flag} ${value}: expected a whole number`);
  return Number(value);
}

/** `true` or `false`, as a flag that takes a value writes it. */
function onOff(value: string, flag: string): boolean {
  if (value === 'true' || value === 'false') return value === 'true';
  throw new OptionsError(`${flag} ${value}: expected true or false`);
}

function parseSeparator(value: string): string {
  if (!TOOL_SEPARATOR.test(value))
    throw new OptionsError(`--tool-separator ${JSON.stringify(value)}: use 1 to 8 of the characters . _ - /`);
  return value;
}

const FLAGS = {
  listen: { type: 'string' },
  state: { type: 'string' },
  'max-image-size': { type: 'string' },
  'token-file': { type: 'string' },
  'allowed-host': { type: 'string', multiple: true },
  'insecure-no-auth': { type: 'boolean' },
  'log-level': { type: 'string' },
  'call-timeout': { type: 'string' },
  'max-memory': { type: 'string' },
  'max-result-size': { type: 'string' },
  'max-call-depth': { type: 'string' },
  'max-concurrency': { type: 'string' },
  workers: { type: 'string' },
  'max-queue': { type: 'string' },
  'tool-separator': { type: 'string' },
  'breaks-window': { type: 'string' },
  serve: { type: 'string', multiple: true },
  'http-proxy': { type: 'string' },
  resolve: { type: 'string', multiple: true },
  secrets: { type: 'string' },
  'http-max-body': { type: 'string' },
  'session-idle': { type: 'string' },
  'max-sessions': { type: 'string' },
  'mcp-max-body': { type: 'string' },
  'headers-timeout': { type: 'string' },
  'request-timeout': { type: 'string' },
  'shutdown-grace': { type: 'string' },
  store: { type: 'string' },
  'store-wait': { type: 'string' },
  'reconcile-interval': { type: 'string' },
  'store-timeout': { type: 'string' },
  'max-listens': { type: 'string' },
  'max-event-streams': { type: 'string' },
  'mcp-fast-path': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function readFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals: false, options: FLAGS }).values;
  } catch (e) {
    throw new OptionsError((e as Error).message);
  }
}

export async function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<DaemonOptions | 'help'> {
  const values = readFlags(argv);
  if (values.help) return 'help';
  const { host, port } = parseListen(values.listen ?? `${DEFAULT_HOST}:${DEFAULT_PORT}`);
  const stateDir = path.resolve(values.state ?? defaultStateDir(env));
  if (values.store !== undefined && values.state !== undefined)
    throw new OptionsError('--state and --store each name where the deployed set is kept: give one');
  const store = values.store === undefined ? undefined : parseStore(values.store);
  const storeOnly = (['store-wait', 'reconcile-interval', 'store-timeout'] as const).find((flag) => values[flag] !== undefined);
  if (store === undefined && storeOnly !== undefined) throw new OptionsError(`--${storeOnly} applies to a --store database only`);
  const storeWaitMs = values['store-wait'] === undefined ? DEFAULT_STORE_WAIT_MS : durationOrNone(values['store-wait'], '--store-wait');
  const reconcileIntervalMs =
    values['reconcile-interval'] === undefined
      ? DEFAULT_RECONCILE_INTERVAL_MS
      : durationOrNone(values['reconcile-interval'], '--reconcile-interval');
  const storeTimeoutMs =
    values['store-timeout'] === undefined ? DEFAULT_STORE_TIMEOUT_MS : duration(values['store-timeout'], '--store-timeout');
  if (storeTimeoutMs > MAX_STORE_TIMEOUT_MS) throw new OptionsError(`--store-timeout ${values['store-timeout']}: must be at most 1h`);
  const maxImageSize = values['max-image-size'] === undefined ? DEFAULT_MAX_IMAGE_SIZE : size(values['max-image-size'], '--max-image-size');
  let token: string | undefined;
  if (values['token-file'] !== undefined) {
    try {
      token = (await readFile(values['token-file'], 'utf8')).trim();
    } catch (e) {
      throw new OptionsError(`--token-file ${values['token-file']}: ${(e as Error).message}`);
    }
    if (token === '') throw new OptionsError(`--token-file ${values['token-file']}: the file is empty`);
  }
  const insecureNoAuth = values['insecure-no-auth'] ?? false;
  if (!isLoopbackAddress(host) && token === undefined && !insecureNoAuth) {
    throw new OptionsError(
      `--listen ${values.listen}: ${host} is reachable from other machines, and without --token-file anyone who reaches it can deploy images ` +
        "that run with the operator's secrets; give --token-file FILE, or --insecure-no-auth to accept that risk",
    );
  }
  const allowedHosts = (values['allowed-host'] ?? []).map((value) => {
    const name = readAllowedHost(value);
    if (name === undefined)
      throw new OptionsError(`--allowed-host ${value}: expected a host name or address without a port (every port is accepted)`);
    return name;
  });
  const limits: Limits = {
    timeout_ms: values['call-timeout'] === undefined ? DEFAULT_LIMITS.timeout_ms : duration(values['call-timeout'], '--call-timeout'),
    max_memory_bytes: values['max-memory'] === undefined ? DEFAULT_LIMITS.max_memory_bytes : size(values['max-memory'], '--max-memory'),
    max_result_bytes:
      values['max-result-size'] === undefined ? DEFAULT_LIMITS.max_result_bytes : size(values['max-result-size'], '--max-result-size'),
    max_concurrency:
      values['max-concurrency'] === undefined ? DEFAULT_LIMITS.max_concurrency : count(values['max-concurrency'], '--max-concurrency'),
  };
  const workers = values.workers === undefined ? workersFor(limits.max_concurrency) : count(values.workers, '--workers');
  if (workers <= limits.max_concurrency) {
    throw new OptionsError(
      `--workers ${workers}: must be more than --max-concurrency (${limits.max_concurrency}), or one harness at its limit would hold every worker`,
    );
  }
  const maxQueue = values['max-queue'] === undefined ? DEFAULT_MAX_QUEUE : wholeNumber(values['max-queue'], '--max-queue');
  if (limits.max_memory_bytes < MIN_MEMORY_BYTES)
    throw new OptionsError(`--max-memory ${values['max-memory']}: must be at least 64K (one wasm page)`);
  const maxCallDepth =
    values['max-call-depth'] === undefined ? DEFAULT_MAX_CALL_DEPTH : wholeNumber(values['max-call-depth'], '--max-call-depth');
  const toolSeparator = values['tool-separator'] === undefined ? DEFAULT_TOOL_SEPARATOR : parseSeparator(values['tool-separator']);
  const breaksWindowMs = values['breaks-window'] === undefined ? DEFAULT_BREAKS_WINDOW_MS : parseWindow(values['breaks-window']);
  if (breaksWindowMs === undefined)
    throw new OptionsError(`--breaks-window ${values['breaks-window']}: expected a duration such as 30d, 12h, 90m or 3600`);
  const serve = parseServe(values.serve ?? []);
  const httpProxy = values['http-proxy'] === undefined ? undefined : parseProxy(values['http-proxy']);
  if (serve.includes(PROXY) && httpProxy === undefined)
    throw new OptionsError(`--serve ${PROXY} needs --http-proxy URL: it sends through the operator's proxy`);
  let resolve: ResolveEntry[];
  try {
    resolve = (values.resolve ?? []).map(parseResolve);
  } catch (e) {
    if (isBadOption(e)) throw new OptionsError(e.message);
    throw e;
  }
  let secrets = Secrets.none();
  if (values.secrets !== undefined) {
    try {
      secrets = await Secrets.load(values.secrets);
    } catch (e) {
      if (isBadOption(e)) throw new OptionsError(e.message);
      throw e;
    }
  }
  const httpMaxBodyBytes = values['http-max-body'] === undefined ? DEFAULT_HTTP_MAX_BODY : size(values['http-max-body'], '--http-max-body');
  const sessionIdleMs = values['session-idle'] === undefined ? SESSION_IDLE_MS : duration(values['session-idle'], '--session-idle');
  const maxSessions = values['max-sessions'] === undefined ? MAX_SESSIONS : count(values['max-sessions'], '--max-sessions');
  const mcpMaxBody = values['mcp-max-body'] === undefined ? MAX_MCP_BODY : size(values['mcp-max-body'], '--mcp-max-body');
  const headersTimeoutMs =
    values['headers-timeout'] === undefined ? DEFAULT_HEADERS_TIMEOUT_MS : duration(values['headers-timeout'], '--headers-timeout');
  const requestTimeoutMs =
    values['request-timeout'] === undefined ? DEFAULT_REQUEST_TIMEOUT_MS : duration(values['request-timeout'], '--request-timeout');
  const shutdownGraceMs =
    values['shutdown-grace'] === undefined ? DEFAULT_SHUTDOWN_GRACE_MS : duration(values['shutdown-grace'], '--shutdown-grace');
  const maxListens = values['max-listens'] === undefined ? MAX_LISTENS : count(values['max-listens'], '--max-listens');
  const maxEventStreams =
    values['max-event-streams'] === undefined ? MAX_EVENT_STREAMS : count(values['max-event-streams'], '--max-event-streams');
  const mcpFastPath = values['mcp-fast-path'] === undefined ? true : onOff(values['mcp-fast-path'], '--mcp-fast-path');
  // Node's HTTP server refuses a head's time longer than the whole request's.
  if (headersTimeoutMs > requestTimeoutMs)
    throw new OptionsError(
      `--headers-timeout ${values['headers-timeout'] ?? '10s'}: must not be longer than --request-timeout (${requestTimeoutMs} ms)`,
    );
  return {
    host,
    port,
    stateDir,
    store,
    storeWaitMs,
    reconcileIntervalMs,
    storeTimeoutMs,
    maxImageSize,
    token,
    allowedHosts,
    insecureNoAuth,
    logLevel: values['log-level'] ?? 'info',
    limits,
    workers,
    maxQueue,
    maxCallDepth,
    toolSeparator,
    breaksWindowMs,
    serve,
    httpProxy,
    resolve,
    secrets,
    secretsFile: values.secrets,
    shutdownGraceMs,
    httpMaxBodyBytes,
    sessionIdleMs,
    maxSessions,
    mcpMaxBody,
    headersTimeoutMs,
    requestTimeoutMs,
    maxListens,
    maxEventStreams,
    mcpFastPath,
  };
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
