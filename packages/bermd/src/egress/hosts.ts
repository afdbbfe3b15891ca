/**
 * Which hosts an HTTP syscall may reach: the patterns an image declares under `berm.http.fetch` or
 * `berm.http.proxy` (`deps.syscalls`), narrowed by the operator's grants, matched against a request's URL.
 *
 * A pattern is a name, optionally behind `*.`, optionally followed by a port:
 * - `api.example.com` is that name exactly, on the default port of the URL's scheme (80 for http:,
 *   443 for https:), so a declared name never opens another service on the same machine;
 * - `api.example.com:8443` is that name on port 8443 only; `api.example.com:*` on any port;
 * - `*.example.com` is every name below example.com (any depth), not example.com itself;
 * - IPv4 addresses and bracketed IPv6 addresses (`[::1]:8080`) are names like any other.
 * Names compare case-insensitively and as the URL parser normalises them (lowercase, punycode), and a
 * trailing dot is part of the name, so `api.example.com.` is not `api.example.com`.
 */
import { HTTP_SYSCALLS, type GrantSet } from '@berm/protocol';

export interface HostPattern {
  /** As written, lowercased: what grants and answers show. */
  text: string;
  /** The name, or for a wildcard the suffix without `*.` (`example.com`). */
  name: string;
  wildcard: boolean;
  /** A port, `*` for any, or undefined for the default port of the URL's scheme. */
  port: number | '*' | undefined;
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/;

function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80;
}

/** The normalised form of a host as a URL would hold it, or undefined when it is not a host. */
function normaliseName(name: string): string | undefined {
  if (name === '' || /[\s/?#@\\]/.test(name)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(`http://${name}/`);
  } catch {
    return undefined;
  }
  // The parser would accept `a:b` as a host with a port; what comes back must be the host alone.
  if (parsed.port !== '' || parsed.username !== '' || parsed.password !== '') return undefined;
  const host = parsed.hostname;
  if (host.startsWith('[')) return host;
  const labels = host.split('.');
  const last = labels.length - 1;
  // One empty label is allowed: the last, for a name written with its trailing dot.
  if (labels.some((l, i) => !(LABEL.test(l) || (l === '' && i === last && i > 0)))) return undefined;
  return host;
}

/** Parses one pattern; answers a message saying what is wrong when it is not one. */
export function parseHostPattern(text: string): HostPattern | string {
  const written = text.trim().toLowerCase();
  let rest = written;
  let port: HostPattern['port'];
  const m = /^(.*?):(\d+|\*)$/.exec(rest);
  if (m !== null && !(rest.startsWith('[') && !rest.includes(']:'))) {
    rest = m[1]!;
    if (m[2] === '*') port = '*';
    else {
      port = Number(m[2]);
      if (port < 1 || port > 65535) return `host pattern ${JSON.stringify(text)}: port ${m[2]} is not 1 to 65535`;
    }
  }
  const wildcard = rest.startsWith('*.');
  if (wildcard) rest = rest.slice(2);
  if (rest.includes('*')) return `host pattern ${JSON.stringify(text)}: a wildcard is only allowed as the first label, as in *.example.com`;
  const name = normaliseName(rest);
  if (name === undefined) return `host pattern ${JSON.stringify(text)} is not a host name, an address, *.name, optionally with :port or :*`;
  if (wildcard && (name.startsWith('[') || /^\d+(\.\d+){3}$/.test(name))) {
    return `host pattern ${JSON.stringify(text)}: a wildcard applies to names, not addresses`;
  }
  const shown = `${wildcard ? '*.' : ''}${name}${port === undefined ? '' : `:${port}`}`;
  return { text: shown, name, wildcard, port };
}

function nameMatches(pattern: HostPattern, hostname: string): boolean {
  if (!pattern.wildcard) return hostname === pattern.name;
  return hostname.length > pattern.name.length + 1 && hostname.endsWith(`.${pattern.name}`);
}

/** Whether `url` (an http: or https: URL) is on a host and port `pattern` covers. */
export function matchesUrl(pattern: HostPattern, url: URL): boolean {
  if (!nameMatches(pattern, url.hostname)) return false;
  const port = url.port === '' ? defaultPort(url.protocol) : Number(url.port);
  if (pattern.port === '*') return true;
  if (pattern.port === undefined) return port === defaultPort(url.protocol);
  return pattern.port === port;
}

/** Whether everything `inner` covers, `outer` covers too: what makes a grant a narrowing of a declaration. */
export function covers(outer: HostPattern, inner: HostPattern): boolean {
  if (outer.port !== '*' && outer.port !== inner.port) return false;
  if (!outer.wildcard) return !inner.wildcard && inner.name === outer.name;
  if (inner.name === outer.name) return inner.wildcard;
  return inner.name.endsWith(`.${outer.name}`);
}

/** The first pattern of `patterns` that covers `url`. */
export function firstMatch(patterns: readonly HostPattern[], url: URL): HostPattern | undefined {
  return patterns.find((p) => matchesUrl(p, url));
}

/** Parses a list of patterns, keeping those that parse; the others come back as messages. */
export function parseHostPatterns(texts: readonly string[]): { patterns: HostPattern[]; problems: string[] } {
  const patterns: HostPattern[] = [];
  const problems: string[] = [];
  for (const text of texts) {
    const p = parseHostPattern(text);
    if (typeof p === 'string') problems.push(p);
    else patterns.push(p);
  }
  return { patterns, problems };
}

/** Parsed host patterns of a grant set's HTTP syscalls, for matching requests. */
export function grantedPatterns(grants: GrantSet): Map<string, HostPattern[]> {
  const out = new Map<string, HostPattern[]>();
  for (const syscall of HTTP_SYSCALLS) {
    const hosts = grants.syscalls[syscall];
    if (hosts !== undefined) out.set(syscall, parseHostPatterns(hosts).patterns);
  }
  return out;
}
