/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): the document that tells a client, from bermd itself,
 * which authorization server issues its tokens and what scopes it knows. A 401's `WWW-Authenticate`
 * points to it (`resource_metadata`), which is how an MCP client finds where to get a token. It is
 * served at the well-known name with the resource's path after it (RFC 9728 §3.1: `/mcp`'s is
 * `/.well-known/oauth-protected-resource/mcp`) and at the bare well-known name, for clients that look
 * there first.
 */
import { SCOPES } from '@berm/protocol';

export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

/** The path of `resource`, without a trailing slash: empty for a resource at the root. */
function resourcePath(resource: string): string {
  const { pathname } = new URL(resource);
  return pathname.replace(/\/+$/, '');
}

/** The URL of the metadata of `resource`, as `WWW-Authenticate` gives it. */
export function resourceMetadataUrl(resource: string): string {
  return `${new URL(resource).origin}${PROTECTED_RESOURCE_WELL_KNOWN}${resourcePath(resource)}`;
}

/** The paths bermd serves the metadata at: the bare well-known name, and the one with the resource's path. */
export function resourceMetadataPaths(resource: string): string[] {
  const path = resourcePath(resource);
  return path === '' ? [PROTECTED_RESOURCE_WELL_KNOWN] : [PROTECTED_RESOURCE_WELL_KNOWN, `${PROTECTED_RESOURCE_WELL_KNOWN}${path}`];
}

export function resourceMetadata(resource: string, issuer: string): ProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [issuer],
    // berm:call:NAME exists for every harness name: the fixed scopes are the ones a listing can hold.
    scopes_supported: [...SCOPES],
    // RFC 6750 §2.1 alone: a token in a form body or a query string ends up in logs.
    bearer_methods_supported: ['header'],
    resource_name: 'berm',
  };
}
