/**
 * The names a request may use to reach bermd (its `Host`) and the pages it may come from (its `Origin`).
 *
 * A web page the operator opens can send requests to a loopback port. Through DNS rebinding it sends
 * them under its own name: `Host: evil.example:7477`, with `Origin: http://evil.example:7477`. Equality
 * of the two proves nothing, since the page controls both; what proves a request is meant for this
 * daemon is a name that only this machine resolves to it. So a `Host` is accepted when its name is
 * `localhost`, an address of 127.0.0.0/8 or `[::1]`, the address bermd listens on (when it is one
 * address rather than every address), or a name the operator allowed (`--allowed-host`, for a reverse
 * proxy), on any port; and an `Origin`, when present, only when its host is one of the same names.
 * Clients outside a browser send no `Origin`.
 */
import { BermdError } from '../errors.js';

const IPV4_LOOPBACK = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** `localhost`, a 127.0.0.0/8 address in dotted form, or `[::1]` (as a Host header writes IPv6, bracketed). */
export function isLoopbackName(name: string): boolean {
  if (name === 'localhost' || name === '[::1]') return true;
  const m = IPV4_LOOPBACK.exec(name);
  return m?.slice(1).every((part) => Number(part) <= 255) ?? false;
}

/** Whether bermd listening on `address` (as `--listen` gives it, IPv6 unbracketed) is reachable from this machine only. */
export function isLoopbackAddress(address: string): boolean {
  return address === '::1' || isLoopbackName(address.toLowerCase());
}

/** The addresses that mean every interface: listening there is not listening on one name. */
const WILDCARDS = new Set(['0.0.0.0', '::', '']);

// A name, or an IPv6 address in brackets, then an optional port: the shape of RFC 9110's Host.
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[^\s:[\]/?#@\\]+)(?::(\d{1,5}))?$/i;

/** The name part of a Host header value, lowercased, with an IPv6 address in its shortest form; undefined when it is not one. */
export function hostName(host: string): string | undefined {
  const m = HOST_HEADER.exec(host);
  if (m === null) return undefined;
  const name = m[1]!.toLowerCase();
  if (!name.startsWith('[')) return name;
  try {
    return new URL(`http://${name}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * An `--allowed-host` value as the checks compare it: a host name or address without a port (every port
 * is accepted), IPv6 with or without brackets; undefined when it is not one.
 */
export function readAllowedHost(value: string): string | undefined {
  let text = value.trim();
  if (text.includes(':') && !text.startsWith('[')) text = `[${text}]`;
  const m = HOST_HEADER.exec(text);
  return m === null || m[2] !== undefined ? undefined : hostName(text);
}

export interface HostPolicyOptions {
  /** The address bermd listens on, as `--listen` gives it; a single address is allowed as a name. */
  listen?: string;
  /** Names allowed besides the loopback ones (`--allowed-host`), already read by `readAllowedHost`. */
  allowed?: readonly string[];
}

/** The check every request passes before any route: its Host, then its Origin. */
export class HostPolicy {
  private readonly names: ReadonlySet<string>;

  constructor(options: HostPolicyOptions = {}) {
    const names = new Set(options.allowed ?? []);
    const listen = options.listen?.toLowerCase();
    if (listen !== undefined && !WILDCARDS.has(listen)) names.add(listen.includes(':') ? (hostName(`[${listen}]`) ?? listen) : listen);
    this.names = names;
  }

  /** The names allowed besides the loopback ones, for messages and the log. */
  get extraNames(): string[] {
    return [...this.names];
  }

  allows(name: string): boolean {
    return isLoopbackName(name) || this.names.has(name);
  }

  /** The error that refuses a request with these headers, or undefined when it may go on. */
  refusal(host: string | undefined, origin: string | undefined): BermdError | undefined {
    if (host === undefined || host === '')
      return new BermdError('forbidden-host', 'the request has no Host header; bermd answers requests addressed to it by name');
    const name = hostName(host);
    if (name === undefined || !this.allows(name)) {
      return new BermdError(
        'forbidden-host',
        `Host ${JSON.stringify(host)} is not a name this bermd answers to (localhost, 127.0.0.0/8, [::1]${this.names.size > 0 ? `, ${this.extraNames.join(', ')}` : ''}); ` +
          'a reverse proxy in front of it is named with --allowed-host',
        { host },
      );
    }
    if (origin === undefined) return undefined;
    let originName: string | undefined;
    try {
      const url = new URL(origin);
      if (url.protocol === 'http:' || url.protocol === 'https:') originName = url.hostname;
    } catch {
      // `null` (an opaque origin: a sandboxed frame, a file) or something that is not a URL.
    }
    if (originName === undefined || !this.allows(originName)) {
      return new BermdError('forbidden-origin', `requests from the web page at origin ${JSON.stringify(origin)} are not accepted`, {
        origin,
      });
    }
    return undefined;
  }
}
