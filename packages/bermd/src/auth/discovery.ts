/**
 * Finding the authorization server's metadata from its issuer identifier, as an MCP client does
 * (MCP authorization, 2025-11-25): RFC 8414's `/.well-known/oauth-authorization-server` first, then
 * OpenID Connect Discovery's `openid-configuration`; for an issuer with a path, the well-known name is
 * inserted before the path (RFC 8414 §3.1), and OpenID's is tried after the path as well. The first
 * document found must name the issuer given, character for character (RFC 8414 §3.3): otherwise another
 * server could pass off its keys as this one's.
 */
import { BermdError } from '../errors.js';
import { isSecureOrLoopback } from './oauth-url.js';

/** What bermd reads of the metadata: where the keys are, and where to ask about an opaque token. */
export interface AuthorizationServerMetadata {
  issuer: string;
  jwksUri?: string;
  introspectionEndpoint?: string;
  /** The URL the document was read from. */
  from: string;
}

/** How long one metadata request may take. */
export const DISCOVERY_TIMEOUT_MS = 10_000;
/** The most of a metadata document bermd reads: such documents are a few kilobytes. */
const MAX_METADATA_BYTES = 256 * 1024;

/** The URLs the metadata of `issuer` may be found at, in the order they are tried. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const origin = url.origin;
  if (path === '') return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

/** Text from outside, cut short and quoted, for a message. */
function quoted(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}...` : text);
}

function unavailable(issuer: string, reason: string): BermdError {
  return new BermdError('auth-unavailable', `the authorization server ${issuer} cannot be used: ${reason}`, { issuer });
}

/** A URL of the metadata, read as a member bermd will fetch from: https, or http on loopback. */
function endpoint(doc: Record<string, unknown>, member: string, issuer: string, from: string): string | undefined {
  const value = doc[member];
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || !isSecureOrLoopback(url))
    throw unavailable(
      issuer,
      `the metadata at ${from} gives ${member} ${quoted(value)}, which is not an https:// URL (or http:// on loopback)`,
    );
  return url.href;
}

async function readJson(response: Response): Promise<unknown> {
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_METADATA_BYTES) throw new Error(`the document is ${length} bytes, more than the ${MAX_METADATA_BYTES} bermd reads`);
  const text = await response.text();
  if (text.length > MAX_METADATA_BYTES) throw new Error(`the document is longer than the ${MAX_METADATA_BYTES} bytes bermd reads`);
  return JSON.parse(text);
}

/**
 * The metadata of `issuer`. Throws `auth-unavailable` when no document is found or reached, or when the
 * one found does not name `issuer` or gives a key set or endpoint bermd may not fetch from.
 */
export async function discover(issuer: string, timeoutMs = DISCOVERY_TIMEOUT_MS): Promise<AuthorizationServerMetadata> {
  const missed: string[] = [];
  for (const from of metadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetch(from, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw unavailable(issuer, `GET ${from} failed: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      missed.push(`${from} answered ${response.status}`);
      continue;
    }
    let doc: unknown;
    try {
      doc = await readJson(response);
    } catch (e) {
      throw unavailable(issuer, `the metadata at ${from} is not JSON bermd can read (${(e as Error).message})`);
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
      throw unavailable(issuer, `the metadata at ${from} is not a JSON object`);
    const fields = doc as Record<string, unknown>;
    if (fields.issuer !== issuer)
      throw unavailable(
        issuer,
        `the metadata at ${from} names the issuer ${quoted(fields.issuer)}, not ${issuer}; give --oauth-issuer exactly as the authorization server names itself`,
      );
    return {
      issuer,
      jwksUri: endpoint(fields, 'jwks_uri', issuer, from),
      introspectionEndpoint: endpoint(fields, 'introspection_endpoint', issuer, from),
      from,
    };
  }
  throw unavailable(issuer, `no metadata found (${missed.join('; ')})`);
}
