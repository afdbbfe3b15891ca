import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MIN_MEMORY_BYTES, readDurationLimit, readSizeLimit, SYSCALL, type Limits } from '@berm/protocol';
import { DEFAULT_BREAKS_WINDOW_MS, parseWindow } from './deploy/index.js';
import {
  DEFAULT_HTTP_MAX_BODY,
  parseResolve,
  ResolveError,
  SERVABLE_SYSCALLS,
  Secrets,
  SecretsFileError,
  type ResolveEntry,
} from './egress/index.js';
import { DEFAULT_LIMITS, DEFAULT_MAX_CALL_DEPTH } from './limits.js';
import { MAX_LISTENS, SESSION_IDLE_MS } from './mcp/index.js';

const PROXY = SYSCALL.httpProxy;

export const DEFAULT_PORT = 7477;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_MAX_IMAGE_SIZE = 64 * 1024 * 1024;
export const DEFAULT_TOOL_SEPARATOR = '.';
/** Characters a tool separator may use: none of them is a letter or digit, so names stay readable. */
export const TOOL_SEPARATOR = /^[._/-]{1,8}$/;

export interface DaemonOptions {
  host: string;
  port: number;
  stateDir: string;
  maxImageSize: number;
  /** The bearer token every request must carry; undefined when auth is off. */
  token?: string;
  logLevel: string;
  /**
   * The daemon's limits, what a harness without its own runs under and the most a deploy may give one:
   * the wall-clock limit of one tool call (nested calls included), the most memory one guest instance
   * may have (an image starting above it is refused at deploy), and the longest result a tool may
   * answer (and host-call request a guest may make).
   */
  limits: Limits;
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
  /** The longest response body handed to a guest by the HTTP syscalls. */
  httpMaxBodyBytes: number;
  /** An MCP session with no request under way and no stream open for this long is closed. */
  sessionIdleMs: number;
  /** The most 2026-07-28 `subscriptions/listen` streams open at once; one more is refused. */
  maxListens: number;
}

export class OptionsError extends Error {
  readonly code = 'bad-option';
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

export const USAGE = `usage: bermd [--listen HOST:PORT] [--state DIR] [--max-image-size N[K|M|G]] [--token-file FILE] [--log-level LEVEL]
             [--call-timeout DURATION] [--max-memory N[K|M|G]] [--max-result-size N[K|M|G]] [--max-call-depth N] [--tool-separator SEP]
             [--breaks-window DURATION] [--serve SYSCALL[,SYSCALL]] [--http-proxy URL] [--resolve HOST:PORT:ADDRESS]...
             [--secrets FILE] [--http-max-body N[K|M|G]] [--session-idle DURATION] [--max-listens N]

  --listen          address to bind (default ${DEFAULT_HOST}:${DEFAULT_PORT}; port 0 picks a free one)
  --state           directory holding the deployed set (default $XDG_STATE_HOME/bermd or ~/.local/state/bermd)
  --max-image-size  largest image a deploy accepts, in bytes (default 64M)
  --token-file      file holding a bearer token every request must carry (default: no auth)
  --log-level       pino level for the structured log on stderr (default info)
  --call-timeout    wall-clock limit of one tool call, nested calls included: 500ms, 10s, 2m; a bare number is seconds (default 10s)
  --max-memory      most memory one guest instance may have (default 64M); an image starting above it is refused at deploy
  --max-result-size longest result a tool may answer (default 1M)
  --max-call-depth  how deep berm.call may nest; 0 refuses the first nested call (default ${DEFAULT_MAX_CALL_DEPTH})
  --tool-separator  between harness and tool in MCP tool names, from . _ - / (default ${DEFAULT_TOOL_SEPARATOR})
  --breaks-window   a redeploy that breaks a tool or event used this recently is refused unless forced: 30d, 12h, 90m; a bare number is seconds; 0 refuses none (default 30d)
  --serve           syscalls beyond the ABI's own to serve, from ${SERVABLE_SYSCALLS.join(', ')} (default: none)
  --http-proxy      the proxy berm.http.proxy sends through (http://HOST:PORT); required to serve berm.http.proxy
  --resolve         HOST:PORT:ADDRESS: direct requests to HOST on PORT connect to ADDRESS (repeatable, as curl's)
  --secrets         JSON file of secrets for {secret:NAME} in request headers; must not be readable by group or others
  --http-max-body   longest response body a guest is handed; longer ones are cut and marked truncated (default 1M)
  --session-idle    an MCP session with no request under way and no stream open this long is closed: 30m, 90s (default 30m)
  --max-listens     most MCP 2026-07-28 listen streams open at once; one more is refused (default ${MAX_LISTENS})`;

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

function parseCount(value: string, flag: string): number {
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(Number(value)))
    throw new OptionsError(`${flag} ${value}: expected a whole number`);
  return Number(value);
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
  'log-level': { type: 'string' },
  'call-timeout': { type: 'string' },
  'max-memory': { type: 'string' },
  'max-result-size': { type: 'string' },
  'max-call-depth': { type: 'string' },
  'tool-separator': { type: 'string' },
  'breaks-window': { type: 'string' },
  serve: { type: 'string', multiple: true },
  'http-proxy': { type: 'string' },
  resolve: { type: 'string', multiple: true },
  secrets: { type: 'string' },
  'http-max-body': { type: 'string' },
  'session-idle': { type: 'string' },
  'max-listens': { type: 'string' },
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
  const limits: Limits = {
    timeout_ms: values['call-timeout'] === undefined ? DEFAULT_LIMITS.timeout_ms : duration(values['call-timeout'], '--call-timeout'),
    max_memory_bytes: values['max-memory'] === undefined ? DEFAULT_LIMITS.max_memory_bytes : size(values['max-memory'], '--max-memory'),
    max_result_bytes:
      values['max-result-size'] === undefined ? DEFAULT_LIMITS.max_result_bytes : size(values['max-result-size'], '--max-result-size'),
  };
  if (limits.max_memory_bytes < MIN_MEMORY_BYTES)
    throw new OptionsError(`--max-memory ${values['max-memory']}: must be at least 64K (one wasm page)`);
  const maxCallDepth =
    values['max-call-depth'] === undefined ? DEFAULT_MAX_CALL_DEPTH : parseCount(values['max-call-depth'], '--max-call-depth');
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
    if (e instanceof ResolveError) throw new OptionsError(e.message);
    throw e;
  }
  let secrets = Secrets.none();
  if (values.secrets !== undefined) {
    try {
      secrets = await Secrets.load(values.secrets);
    } catch (e) {
      if (e instanceof SecretsFileError) throw new OptionsError(e.message);
      throw e;
    }
  }
  const httpMaxBodyBytes = values['http-max-body'] === undefined ? DEFAULT_HTTP_MAX_BODY : size(values['http-max-body'], '--http-max-body');
  const sessionIdleMs = values['session-idle'] === undefined ? SESSION_IDLE_MS : duration(values['session-idle'], '--session-idle');
  const maxListens = values['max-listens'] === undefined ? MAX_LISTENS : parseCount(values['max-listens'], '--max-listens');
  if (maxListens < 1) throw new OptionsError(`--max-listens ${values['max-listens']}: must be at least 1`);
  return {
    host,
    port,
    stateDir,
    maxImageSize,
    token,
    logLevel: values['log-level'] ?? 'info',
    limits,
    maxCallDepth,
    toolSeparator,
    breaksWindowMs,
    serve,
    httpProxy,
    resolve,
    secrets,
    httpMaxBodyBytes,
    sessionIdleMs,
    maxListens,
  };
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
