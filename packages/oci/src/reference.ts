import { OciError } from './errors.js';

/** `oci://HOST/REPO:TAG`, `oci://HOST/REPO@sha256:…` or both, as the distribution spec names an artifact. */
export interface Reference {
  /** The registry's host, with its port when given (`127.0.0.1:5000`). */
  host: string;
  /** The repository's path (`org/weather`). */
  repository: string;
  /** Absent when only a digest is given. */
  tag?: string;
  /** `sha256:<hex>`, when given. */
  digest?: string;
}

export const SCHEME = 'oci://';

// The distribution spec's grammar (its "pulling manifests" section), repository components lower case.
const COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const HOST = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::[0-9]{1,5})?$/;

export function isDigest(text: string): boolean {
  return DIGEST.test(text);
}

/**
 * Reads a reference; `oci://` may be left off. A reference with neither tag nor digest means `:latest`,
 * as docker reads one. Throws `bad-reference` naming the part that is wrong.
 */
export function parseReference(text: string): Reference {
  const bare = text.startsWith(SCHEME) ? text.slice(SCHEME.length) : text;
  const fail = (why: string): never => {
    throw new OciError(
      'bad-reference',
      `${JSON.stringify(text)} is not a registry reference: ${why} (expected oci://HOST/REPO:TAG or oci://HOST/REPO@sha256:…)`,
      {
        reference: text,
      },
    );
  };
  const slash = bare.indexOf('/');
  if (slash <= 0) fail('no HOST/ before the repository');
  const host = bare.slice(0, slash);
  if (!HOST.test(host)) fail(`the host ${JSON.stringify(host)} is not a host name or address`);
  let rest = bare.slice(slash + 1);
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) fail('the digest is not sha256: and 64 lower-case hex digits');
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon >= 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) fail(`the tag ${JSON.stringify(tag)} is not 1 to 128 letters, digits, _, . or - (not starting with . or -)`);
  }
  if (rest === '' || !rest.split('/').every((c) => COMPONENT.test(c)))
    fail(`the repository ${JSON.stringify(rest)} is not lower-case path components`);
  if (tag === undefined && digest === undefined) tag = 'latest';
  return { host, repository: rest, ...(tag === undefined ? {} : { tag }), ...(digest === undefined ? {} : { digest }) };
}

/**
 * Whether `text` looks like a reference written without `oci://`: its first component names a host as
 * docker tells one (a dot, a port, or `localhost`), so `build/weather.wasm` never does. The caller asks
 * only when no file by that name exists.
 */
export function looksLikeBareReference(text: string): boolean {
  const slash = text.indexOf('/');
  if (slash <= 0) return false;
  const first = text.slice(0, slash);
  if (!(first.includes('.') || first.includes(':') || first === 'localhost')) return false;
  try {
    parseReference(text);
    return true;
  } catch {
    return false;
  }
}

/** The reference as text, `oci://` first; the digest when there is one, else the tag. */
export function formatReference(ref: Reference, pin?: string): string {
  const digest = pin ?? ref.digest;
  const tag = ref.tag === undefined ? '' : `:${ref.tag}`;
  return `${SCHEME}${ref.host}/${ref.repository}${tag}${digest === undefined ? '' : `@${digest}`}`;
}

/** What the registry's manifest endpoint is asked for: the digest when pinned, else the tag. */
export function manifestKey(ref: Reference): string {
  return ref.digest ?? ref.tag ?? 'latest';
}

/** Loopback registries speak plain HTTP unless told otherwise, as docker's daemon treats them. */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/:[0-9]+$/, '').replace(/^\[|\]$/g, '');
  return name === 'localhost' || name === '::1' || /^127\.[0-9]+\.[0-9]+\.[0-9]+$/.test(name);
}
