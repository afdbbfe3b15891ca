import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

export const DEFAULT_PORT = 7477;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_MAX_IMAGE_SIZE = 64 * 1024 * 1024;

export interface DaemonOptions {
  host: string;
  port: number;
  stateDir: string;
  maxImageSize: number;
  /** The bearer token every request must carry; undefined when auth is off. */
  token?: string;
  logLevel: string;
}

export class OptionsError extends Error {
  readonly code = 'bad-option';
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

export const USAGE = `usage: bermd [--listen HOST:PORT] [--state DIR] [--max-image-size N[K|M|G]] [--token-file FILE] [--log-level LEVEL]

  --listen          address to bind (default ${DEFAULT_HOST}:${DEFAULT_PORT}; port 0 picks a free one)
  --state           directory holding the deployed set (default $XDG_STATE_HOME/bermd or ~/.local/state/bermd)
  --max-image-size  largest image a deploy accepts, in bytes (default 64M)
  --token-file      file holding a bearer token every request must carry (default: no auth)
  --log-level       pino level for the structured log on stderr (default info)`;

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

export function parseSize(value: string): number {
  const m = /^(\d+)\s*([KMG]i?B?)?$/i.exec(value.trim());
  if (m === null) throw new OptionsError(`--max-image-size ${value}: expected a byte count such as 1048576, 512K or 64M`);
  const unit = (m[2] ?? '').charAt(0).toUpperCase();
  const scale = unit === 'K' ? 1024 : unit === 'M' ? 1024 ** 2 : unit === 'G' ? 1024 ** 3 : 1;
  const n = Number(m[1]) * scale;
  if (n < 1 || !Number.isSafeInteger(n)) throw new OptionsError(`--max-image-size ${value}: must be at least 1 byte`);
  return n;
}

export async function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<DaemonOptions | 'help'> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        listen: { type: 'string' },
        state: { type: 'string' },
        'max-image-size': { type: 'string' },
        'token-file': { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new OptionsError((e as Error).message);
  }
  if (values.help) return 'help';
  const { host, port } = parseListen(values.listen ?? `${DEFAULT_HOST}:${DEFAULT_PORT}`);
  const stateDir = path.resolve(values.state ?? defaultStateDir(env));
  const maxImageSize = values['max-image-size'] === undefined ? DEFAULT_MAX_IMAGE_SIZE : parseSize(values['max-image-size']);
  let token: string | undefined;
  if (values['token-file'] !== undefined) {
    try {
      token = (await readFile(values['token-file'], 'utf8')).trim();
    } catch (e) {
      throw new OptionsError(`--token-file ${values['token-file']}: ${(e as Error).message}`);
    }
    if (token === '') throw new OptionsError(`--token-file ${values['token-file']}: the file is empty`);
  }
  return { host, port, stateDir, maxImageSize, token, logLevel: values['log-level'] ?? 'info' };
}
