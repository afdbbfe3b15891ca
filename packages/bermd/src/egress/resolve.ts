/**
 * `--resolve HOST:PORT:ADDRESS`, as curl has it: requests to HOST on PORT connect to ADDRESS instead of
 * what DNS answers for HOST, while the request itself is unchanged (the Host header, and the TLS server
 * name, stay HOST). The host checks run on the URL as the guest wrote it, so this changes where a
 * granted request lands, never what is granted. It applies to direct requests (`berm.http.fetch`); a
 * request through the proxy is resolved by the proxy.
 */
import { isIP } from 'node:net';
import type { buildConnector } from 'undici';
import { parseHostPattern } from './hosts.js';

export interface ResolveEntry {
  /** Lowercased, as URLs hold host names. */
  host: string;
  port: number;
  /** An IPv4 or IPv6 address, without brackets. */
  address: string;
}

export class ResolveError extends Error {
  readonly code = 'bad-resolve';
  override name = 'ResolveError';
}

/** Parses `HOST:PORT:ADDRESS` (ADDRESS may be a bracketed IPv6 address). */
export function parseResolve(text: string): ResolveEntry {
  const m = /^([^:[\]]+):(\d+):(.+)$/.exec(text.trim());
  if (m === null) throw new ResolveError(`--resolve ${text}: expected HOST:PORT:ADDRESS, e.g. api.example.com:443:127.0.0.1`);
  const pattern = parseHostPattern(m[1]!);
  if (typeof pattern === 'string' || pattern.wildcard || pattern.port !== undefined)
    throw new ResolveError(`--resolve ${text}: ${m[1]} is not a host name`);
  const port = Number(m[2]);
  if (port < 1 || port > 65535) throw new ResolveError(`--resolve ${text}: port ${m[2]} is not 1 to 65535`);
  let address = m[3]!;
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  if (isIP(address) === 0) throw new ResolveError(`--resolve ${text}: ${m[3]} is not an IP address`);
  return { host: pattern.name, port, address };
}

function key(host: string, port: number): string {
  return `${host.toLowerCase()}:${port}`;
}

type Connector = buildConnector.connector;

/**
 * An undici connector that dials the mapped address for a mapped host and port, and anything else as
 * asked, built on `build` (undici's `buildConnector`, which the caller has loaded: this module is on every
 * bermd's start, undici is not).
 */
export function resolvingConnector(
  build: typeof buildConnector,
  entries: readonly ResolveEntry[],
  options: buildConnector.BuildOptions = {},
): Connector {
  const base = build(options);
  if (entries.length === 0) return base;
  const table = new Map(entries.map((e) => [key(e.host, e.port), e.address]));
  return (opts, callback) => {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    const address = table.get(key(opts.hostname, port));
    // `host` (name:port) is left as it was: undici takes the TLS server name from it.
    return base(address === undefined ? opts : { ...opts, hostname: address }, callback);
  };
}
