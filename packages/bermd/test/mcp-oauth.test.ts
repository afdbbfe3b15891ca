// The official MCP SDK clients of both generations reaching a bermd through their own OAuth support, as
// a host embedding them would: nothing configured but the server's URL and a client's credentials. They
// find the authorization server from bermd's 401 (RFC 9728 metadata), get a token from a real one
// (oidc-provider, test/helpers/oidc.ts) by client credentials or by the authorization code flow with
// PKCE, whose browser step the test drives through the provider's login form, and step up when bermd
// answers 403 insufficient_scope.
import {
  Client as ModernClient,
  ClientCredentialsProvider as ModernClientCredentials,
  type OAuthClientProvider as ModernProvider,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relayManifest, relayWat } from '../../../test/helpers/guest.js';
import { closedPort } from '../../../test/helpers/loopback.js';
import { BERM_SCOPES, startIssuer, type TestIssuer } from '../../../test/helpers/oidc.js';
import { buildImage } from '../../../test/helpers/wat.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { type AnyToolResult, deploy, MODERN, valueOf } from './mcp-client.js';

/** Where the public client's authorization responses go: a loopback redirect (RFC 8252) the test reads from the Location header. */
const REDIRECT = 'http://127.0.0.1:9/callback';
const PUBLIC_CLIENT = 'mcp-app';
const RELAY_TOOLS = relayManifest().tools.map((t) => t.name);
const toolsOf = (...harnesses: string[]): string[] => harnesses.flatMap((h) => RELAY_TOOLS.map((t) => `${h}.${t}`)).sort();

/**
 * A person's browser going through an authorization URL: it follows the redirects, keeping the
 * provider's cookies, fills the login form with `user`, and stops at the redirect to the client's
 * loopback URI, whose query (code, state, iss) it answers.
 */
async function signInThroughBrowser(authorizationUrl: URL, user: string): Promise<URLSearchParams> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl.href;
  let init: RequestInit = {};
  for (let hop = 0; hop < 20; hop++) {
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie } });
    for (const set of res.headers.getSetCookie()) {
      const pair = set.split(';', 1)[0]!;
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (location !== null) {
      await res.body?.cancel();
      const next = new URL(location, url);
      if (next.href.startsWith(REDIRECT)) return next.searchParams;
      url = next.href;
      init = {};
      continue;
    }
    const page = await res.text();
    const form = /<form method="post" action="([^"]+)"/.exec(page);
    if (form === null) throw new Error(`the provider answered ${res.status} at ${url} with no form and no redirect: ${page.slice(0, 300)}`);
    url = new URL(form[1]!.replaceAll('&amp;', '&'), url).href;
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user }).toString(),
    };
  }
  throw new Error(`no redirect to ${REDIRECT} after 20 hops from ${authorizationUrl.href}`);
}

/**
 * A host's OAuth client provider for the authorization code flow with PKCE, as a preregistered public
 * client, holding everything in memory; it records each authorization URL the SDK sends the user to.
 */
class PublicClient implements OAuthClientProvider {
  readonly authorizations: URL[] = [];
  private saved?: OAuthTokens;
  private verifier = '';

  get redirectUrl(): string {
    return REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'mcp-oauth test host',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed {
    return { client_id: PUBLIC_CLIENT };
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizations.push(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  /** The scopes of the last token saved. */
  scopes(): string[] {
    return (this.saved?.scope ?? '')
      .split(' ')
      .filter((s) => s !== '')
      .sort();
  }
}

const names = (tools: ReadonlyArray<{ name: string }>): string[] => tools.map((t) => t.name).sort();

describe('the MCP SDK clients through their own OAuth support', { timeout: 60_000 }, () => {
  let as: TestIssuer;
  let d: RunningDaemon;
  let resource: string;
  /** What alice consents to when asked, changed by a test between rounds. */
  let consent: (scopes: readonly string[]) => readonly string[] = (scopes) => scopes;

  beforeAll(async () => {
    // The resource bermd names must be the URL the clients connect to: the SDKs check the one against the other.
    const port = await closedPort();
    resource = `http://127.0.0.1:${port}/mcp`;
    as = await startIssuer({
      resources: [resource],
      scopes: [...BERM_SCOPES, 'berm:call:alpha', 'berm:call:beta'],
      clients: { deployer: ['berm:deploy', 'berm:read'], narrow: ['berm:call:alpha', 'berm:call:beta'] },
      users: ['alice'],
      publicClients: { [PUBLIC_CLIENT]: [REDIRECT] },
      loginForm: true,
      consent: ({ scopes }) => consent(scopes),
    });
    d = await startDaemon({ port, args: ['--oauth-issuer', as.issuer, '--resource', resource, '--log-level', 'debug'] });
    const auth = { authorization: `Bearer ${await as.tokenFor({ client: 'deployer', scopes: ['berm:deploy', 'berm:read'] })}` };
    for (const name of ['alpha', 'beta']) await deploy(d.url, name, await buildImage(relayWat(), relayManifest()), auth);
  });

  afterAll(async () => {
    await d?.stop();
    await as?.close();
    await removeDir(d?.stateDir ?? '');
  });

  /** Whether bermd ran `tool` for anyone (its log's line for each call that finished). */
  const ran = (tool: string): boolean => d.log().some((e) => e.msg === 'tools/call finished' && e.tool === tool);

  it('a 2025-11-25 client (SDK 1.x) by client credentials: discovers from the 401, lists and calls what its scope allows, and is refused the rest', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(resource), {
      authProvider: new ClientCredentialsProvider({
        clientId: 'narrow',
        clientSecret: as.clients.narrow!.secret,
        scope: 'berm:call:alpha',
        expectedIssuer: as.issuer,
      }),
    });
    const client = new Client({ name: 'oauth-1x', version: '0' });
    await client.connect(transport);
    try {
      // Given only bermd's URL, it found the authorization server from the 401 and got a token there.
      expect(as.requests('/token')).toBeGreaterThan(0);
      expect(names((await client.listTools()).tools)).toEqual(toolsOf('alpha'));
      const result = (await client.callTool({ name: 'alpha.forecast', arguments: { days: 2 } })) as AnyToolResult;
      expect(valueOf(result)).toEqual({ days: 2 });
      // This SDK asks for the scope it was configured with whatever the challenge names, so its step-up
      // gets the same token back and it gives up: refused, and nothing ran.
      const refused = await client.callTool({ name: 'beta.forecast', arguments: { days: 2 } }).catch((e: unknown) => e);
      expect((refused as Error).message).toMatch(/403/);
      expect(ran('beta.forecast')).toBe(false);
    } finally {
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
  });

  it('a 2026-07-28 client (SDK 2.x) by client credentials steps up on 403 to the scope the challenge names, and keeps what it had', async () => {
    const client = new ModernClient({ name: 'oauth-2x', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    const authProvider = new ModernClientCredentials({
      clientId: 'narrow',
      clientSecret: as.clients.narrow!.secret,
      expectedIssuer: as.issuer,
    });
    // It starts from a token it already holds for alpha alone. (Asked from nothing, this SDK asks for the
    // scopes bermd's metadata lists, which name no harness: the metadata is public, and a harness's name
    // is for those who may call it.)
    const narrow = await as.tokenFor({ client: 'narrow', scopes: ['berm:call:alpha'] });
    authProvider.saveTokens({ access_token: narrow, token_type: 'Bearer', scope: 'berm:call:alpha' });
    await client.connect(new ModernTransport(new URL(resource), { authProvider }));
    try {
      expect(names((await client.listTools()).tools)).toEqual(toolsOf('alpha'));
      const tokensBefore = as.requests('/token');
      // beta is not in its token: bermd answers 403 naming berm:call:beta beside what it holds; the SDK
      // asks the authorization server for that, and calls again with the new token.
      const result = (await client.callTool({ name: 'beta.forecast', arguments: { days: 4 } })) as AnyToolResult;
      expect(valueOf(result)).toEqual({ days: 4 });
      expect(as.requests('/token')).toBe(tokensBefore + 1);
      expect((await authProvider.tokens())?.scope?.split(' ').sort()).toEqual(['berm:call:alpha', 'berm:call:beta']);
      // The list this client holds was cached under bermd's hint before the step-up; asked anew, it has both.
      expect(names((await client.listTools(undefined, { cacheMode: 'refresh' })).tools)).toEqual(toolsOf('alpha', 'beta'));
      expect(valueOf((await client.callTool({ name: 'alpha.forecast', arguments: { days: 1 } })) as AnyToolResult)).toEqual({ days: 1 });
    } finally {
      await client.close();
    }
  });

  it('a 2025-11-25 client (SDK 1.x) by the authorization code flow with PKCE through the login form, stepping up when the user consented to too little', async () => {
    const provider = new PublicClient();
    const connectOnce = async (): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
      const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider });
      const client = new Client({ name: 'oauth-1x-user', version: '0' });
      await client.connect(transport);
      return { client, transport };
    };
    /** Sends the user through the last authorization URL and hands the code to a transport. */
    const authorize = async (): Promise<void> => {
      const url = provider.authorizations.at(-1)!;
      // PKCE with S256 and the resource indicator, as the MCP authorization specification asks.
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('resource')).toBe(resource);
      const answer = await signInThroughBrowser(url, 'alice');
      const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider });
      await transport.finishAuth(answer.get('code')!);
    };
    try {
      // Alice agrees to read only: the client has a token, but /mcp asks for a call scope.
      consent = (scopes) => scopes.filter((s) => s === 'berm:read');
      await expect(connectOnce()).rejects.toBeInstanceOf(UnauthorizedError);
      expect(provider.authorizations).toHaveLength(1);
      await authorize();
      expect(provider.scopes()).toEqual(['berm:read']);
      // Connecting again, the 403 names berm:call beside berm:read; the SDK sends her back to sign in for it.
      await expect(connectOnce()).rejects.toBeInstanceOf(UnauthorizedError);
      expect(provider.authorizations).toHaveLength(2);
      expect(provider.authorizations[1]!.searchParams.get('scope')!.split(' ').sort()).toEqual(['berm:call', 'berm:read']);
      consent = (scopes) => scopes;
      await authorize();
      expect(provider.scopes()).toEqual(['berm:call', 'berm:read']);
      const { client, transport } = await connectOnce();
      try {
        expect(names((await client.listTools()).tools)).toEqual(toolsOf('alpha', 'beta'));
        expect(valueOf((await client.callTool({ name: 'beta.forecast', arguments: { days: 5 } })) as AnyToolResult)).toEqual({ days: 5 });
        const line = await d.waitForLog((e) => e.msg === 'tools/call finished' && e.tool === 'beta.forecast' && e.principal === 'alice');
        expect(line).toMatchObject({ principal: 'alice' });
      } finally {
        await transport.terminateSession().catch(() => {});
        await client.close();
      }
    } finally {
      consent = (scopes) => scopes;
    }
  });

  it('a 2026-07-28 client (SDK 2.x) by the authorization code flow with PKCE through the login form', async () => {
    const provider = new PublicClient();
    const modernProvider = provider as unknown as ModernProvider;
    const connectOnce = async (): Promise<ModernClient> => {
      const client = new ModernClient({ name: 'oauth-2x-user', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
      await client.connect(new ModernTransport(new URL(resource), { authProvider: modernProvider }));
      return client;
    };
    await expect(connectOnce()).rejects.toThrow();
    expect(provider.authorizations).toHaveLength(1);
    const answer = await signInThroughBrowser(provider.authorizations[0]!, 'alice');
    // The authorization response names its issuer (RFC 9207), which this SDK checks.
    expect(answer.get('iss')).toBe(as.issuer);
    await new ModernTransport(new URL(resource), { authProvider: modernProvider }).finishAuth(answer);
    const client = await connectOnce();
    try {
      expect(names((await client.listTools()).tools)).toEqual(toolsOf('alpha', 'beta'));
      expect(valueOf((await client.callTool({ name: 'alpha.forecast', arguments: { days: 6 } })) as AnyToolResult)).toEqual({ days: 6 });
    } finally {
      await client.close();
    }
  });
});
