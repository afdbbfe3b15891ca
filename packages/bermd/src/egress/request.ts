/**
 * The request a guest hands `berm.http.fetch` / `berm.http.proxy`, read and checked before anything is
 * sent: `{"method": "GET", "url": "https://...", "headers": {"name": "value"}, "body": "text"}`, with
 * `"body_base64": true` when `body` is base64 for bytes that are not text.
 */
import { isPlainObject } from '../runtime/index.js';

export interface GuestRequest {
  method: string;
  url: URL;
  /** Names lowercased, in the order given; a name given a list of values appears once per value. */
  headers: Array<[string, string]>;
  body?: Buffer;
}

/** `{idempotency-key}` in a header value: the calling instance's idempotency key, filled in by the host as a secret is. */
export const IDEMPOTENCY_KEY_REF = '{idempotency-key}';

/** `{secret:NAME}` in a header value. */
export const SECRET_REF = /\{secret:([^{}]*)\}/g;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Headers the host owns: the Host header must be the URL's (it is what the host checks ran on), and the
 * framing and connection headers are the HTTP client's to write.
 */
const HOST_OWNED = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'upgrade',
  'expect',
  'content-length',
  'trailer',
  'http2-settings',
]);

const MEMBERS = new Set(['method', 'url', 'headers', 'body', 'body_base64']);

/** The request, or a message saying why it is refused. */
export function parseGuestRequest(value: unknown, syscall: string): GuestRequest | string {
  const shape = `a ${syscall} request is {"method": string, "url": string, "headers": {name: string}, "body": string, "body_base64": boolean}`;
  if (!isPlainObject(value)) return shape;
  for (const key of Object.keys(value)) if (!MEMBERS.has(key)) return `unknown member ${JSON.stringify(key)}: ${shape}`;
  const method = value.method === undefined ? 'GET' : value.method;
  if (typeof method !== 'string' || !TOKEN.test(method)) return `method ${JSON.stringify(method)} is not an HTTP method`;
  const upper = method.toUpperCase();
  if (upper === 'CONNECT' || upper === 'TRACE') return `method ${upper} is not sent`;
  if (typeof value.url !== 'string') return `url must be a string: ${shape}`;
  let url: URL;
  try {
    url = new URL(value.url);
  } catch {
    return `url ${JSON.stringify(value.url)} is not an absolute URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `url ${JSON.stringify(value.url)}: only http: and https: URLs are sent`;
  if (url.username !== '' || url.password !== '')
    return `url ${JSON.stringify(value.url)} carries credentials; send them in a header, as {secret:NAME}`;
  url.hash = '';

  const headers: Array<[string, string]> = [];
  if (value.headers !== undefined && value.headers !== null) {
    if (!isPlainObject(value.headers)) return `headers must be an object of name to value: ${shape}`;
    for (const [name, given] of Object.entries(value.headers)) {
      if (!TOKEN.test(name)) return `header name ${JSON.stringify(name)} is not an HTTP token`;
      const lower = name.toLowerCase();
      if (HOST_OWNED.has(lower) || lower.startsWith('proxy-')) return `header ${name} is the host's to set`;
      const values = Array.isArray(given) ? given : [given];
      for (const v of values) {
        if (typeof v !== 'string') return `header ${name}: values are strings`;
        if (/[\r\n\0]/.test(v)) return `header ${name}: a value may not hold CR, LF or NUL`;
        headers.push([lower, v]);
      }
    }
  }

  let body: Buffer | undefined;
  if (value.body_base64 !== undefined && typeof value.body_base64 !== 'boolean') return 'body_base64 must be true or false';
  if (value.body !== undefined && value.body !== null) {
    if (typeof value.body !== 'string') return 'body must be a string (base64 with "body_base64": true for bytes)';
    if (value.body_base64 === true) {
      const compact = value.body.replace(/\s+/g, '');
      if (compact.length % 4 !== 0 || !BASE64.test(compact)) return 'body is not base64, though body_base64 is true';
      body = Buffer.from(compact, 'base64');
    } else {
      body = Buffer.from(value.body, 'utf8');
    }
  }
  return { method, url, headers, body };
}

/** The secret names a request's header values refer to, in order of first use. */
export function secretRefs(headers: ReadonlyArray<[string, string]>): string[] {
  const names: string[] = [];
  for (const [, v] of headers) {
    for (const m of v.matchAll(SECRET_REF)) if (!names.includes(m[1]!)) names.push(m[1]!);
  }
  return names;
}
