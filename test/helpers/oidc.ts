/**
 * A real OAuth 2.1 authorization server for tests: `oidc-provider` on a loopback port, issuing access
 * tokens bound to a resource (RFC 8707 resource indicators) with the berm scopes, as an identity provider
 * in front of bermd would.
 *
 * What it holds:
 * - confidential clients for the client credentials grant, each allowed its own scopes (`clients`);
 *   `tokenFor` obtains a token from the token endpoint over HTTP;
 * - a public client for the authorization code flow with PKCE, redirecting to loopback (`publicClient`);
 *   `userToken` runs that flow over HTTP for a user of the account store (`users`), its logins and consent
 *   answered by the helper itself; more public clients with redirect URIs of their own (`publicClients`),
 *   and a login form asking for the user's name (`loginForm`), for a browser driven through the flow;
 * - a resource-server client that may ask the introspection endpoint about tokens (`introspector`), for
 *   opaque tokens (`accessTokenFormat: 'opaque'`);
 * - its signing key, and a stranger key it does not publish (`sign` makes a JWT with either, for the
 *   refusals a real server would never issue: expired, another audience, no signature, an unknown `kid`);
 *   `publishStranger` adds the stranger key to its key set, as a key rotation would.
 *
 * Discovery: RFC 8414's `/.well-known/oauth-authorization-server` (the issuer's path inserted after it,
 * RFC 8414 §3.1) and OpenID's `{issuer}/.well-known/openid-configuration`, each of which can be left out
 * (`discovery`). Every request is counted by path (`requests`), the key set's among them (`jwksFetches`).
 *
 * Nothing here waits on a timer: each call resolves when the HTTP exchange it makes does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider, { type Configuration, errors, type KoaContextWithOIDC } from 'oidc-provider';

/** The scopes bermd knows (`@berm/protocol`'s SCOPE). */
export const BERM_SCOPES = ['berm:read', 'berm:deploy', 'berm:force', 'berm:call'] as const;

/** A resource indicator tests use for bermd: https, so that it is a URL an operator could give. */
export const TEST_RESOURCE = 'https://berm.example.test/mcp';

export interface IssuerOptions {
  /** The resource indicators tokens may be asked for; every token's `aud` is one of them. Default: `[TEST_RESOURCE]`. */
  resources?: readonly string[];
  /** The scopes each resource offers. Default: the berm scopes; add `berm:call:NAME` ones as needed. */
  scopes?: readonly string[];
  /** Confidential clients for client credentials, by id, with the scopes each may be given. Default: `berm-ci`, every scope. */
  clients?: Readonly<Record<string, readonly string[]>>;
  /** The account store: the users who may sign in through `userToken`. Default: `alice`. */
  users?: readonly string[];
  /** The issuer's path (`/tenant`); none by default. */
  path?: string;
  /** Which discovery documents it serves. Default: both. */
  discovery?: { oauth?: boolean; openid?: boolean };
  /** `jwt` (default) or `opaque`: an opaque token is known only through introspection. */
  accessTokenFormat?: 'jwt' | 'opaque';
  /** Lifetime of an access token, in seconds. Default: 300. */
  accessTokenTtl?: number;
  /** The loopback port to listen on (one chosen before, for a server started after bermd); a free one by default. */
  port?: number;
  /**
   * More public clients of the authorization code flow with PKCE, by id, each with its redirect URIs: a
   * web page's (bermd's page at `http://127.0.0.1:PORT/`), whose origin may then call the token endpoint.
   */
  publicClients?: Readonly<Record<string, readonly string[]>>;
  /**
   * Signing in asks for the user's name in an HTML form, as a person would meet it in a browser; by
   * default the user is the request's `login_hint`, for flows driven over HTTP (`userToken`).
   */
  loginForm?: boolean;
  /**
   * What a user consents to of the scopes a client asks for at `resource`: the rest are declined, and the
   * token holds only those consented to. Every scope asked for by default; a test changes its answer
   * between rounds (a user who later agrees to more, as a step-up asks).
   */
  consent?: (asked: { user: string; resource: string; scopes: readonly string[] }) => readonly string[];
  /**
   * Whether clients may register themselves (RFC 7591, open registration at `{issuer}/reg`), as a command
   * line client does. A client registered so with `refresh_token` among its grant types and granted
   * `offline_access` gets refresh tokens, rotated on every use. Default: off.
   */
  registration?: boolean;
}

export interface SignOptions {
  /** Signed by the issuer's own key (default) or by the stranger key it does not publish (until `publishStranger`). */
  key?: 'issuer' | 'stranger';
  /** The header's `kid`: by default the key's own. */
  kid?: string;
  /** `none` makes an unsecured JWT (RFC 7519 §6): no signature at all. */
  alg?: 'RS256' | 'none';
  /** The header's `typ`: `at+jwt` by default (RFC 9068). */
  typ?: string;
}

export interface TestIssuer {
  /** The issuer identifier, exactly as its metadata and its tokens' `iss` say it. */
  issuer: string;
  /** The origin it listens on (`http://127.0.0.1:PORT`). */
  origin: string;
  port: number;
  jwksUri: string;
  tokenEndpoint: string;
  introspectionEndpoint: string;
  /** The resource indicators it issues tokens for. */
  resources: readonly string[];
  /** The confidential clients, by id, each with its secret. */
  clients: Readonly<Record<string, { id: string; secret: string }>>;
  /** The public client of the authorization code flow with PKCE. */
  publicClient: { id: string; redirectUri: string };
  /** The resource server's own client, which may ask the introspection endpoint about tokens. */
  introspector: { id: string; secret: string };
  /** The `kid` of its signing key, and of the stranger key. */
  kid: string;
  strangerKid: string;
  /** A token by client credentials over HTTP: for `resource` (default: the first), with the scopes asked that the client may have. */
  tokenFor(options?: { scopes?: readonly string[]; resource?: string; client?: string }): Promise<string>;
  /** A token for `user` (of the account store) by the authorization code flow with PKCE, over HTTP. */
  userToken(options: { user: string; scopes?: readonly string[]; resource?: string }): Promise<string>;
  /**
   * A JWT made here rather than issued: `claims` over defaults for a valid access token of this issuer
   * (`iss`, `aud` the first resource, `sub`, `client_id`, `scope`, `iat`, `exp` five minutes on, `jti`).
   * A claim given as `undefined` is left out.
   */
  sign(claims?: Record<string, unknown>, options?: SignOptions): Promise<string>;
  /** Adds the stranger key to the key set it serves (a rotation); the token endpoint keeps signing with its own. */
  publishStranger(): Promise<void>;
  /** How many requests it has had for `path` (a path on its origin: `/jwks`, `/.well-known/...`). */
  requests(path: string): number;
  /** How many times its key set has been fetched. */
  jwksFetches(): number;
  close(): Promise<void>;
}

interface KeyPair {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
}

async function keyPair(kid: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateJwk, publicJwk, privateKey };
}

const secret = (): string => randomBytes(24).toString('base64url');

/** An unsecured JWT: a header saying `alg: none`, the claims, an empty signature. */
function unsecured(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part(header)}.${part(claims)}.`;
}

/** Starts an authorization server; the test closes it. */
export async function startIssuer(options: IssuerOptions = {}): Promise<TestIssuer> {
  const resources = options.resources ?? [TEST_RESOURCE];
  const scopes = options.scopes ?? BERM_SCOPES;
  const clientScopes = options.clients ?? { 'berm-ci': scopes };
  const users = new Set(options.users ?? ['alice']);
  const path = options.path ?? '';
  if (path !== '' && (!path.startsWith('/') || path.endsWith('/')))
    throw new Error(`issuer path ${path}: start it with / and end it without`);
  const discovery = { oauth: options.discovery?.oauth ?? true, openid: options.discovery?.openid ?? true };
  const format = options.accessTokenFormat ?? 'jwt';
  const ttl = options.accessTokenTtl ?? 300;

  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const issuer = `${origin}${path}`;

  const own = await keyPair(`issuer-${port}`);
  const stranger = await keyPair(`stranger-${port}`);
  const published: JWK[] = [own.publicJwk];

  const clients = Object.fromEntries(Object.keys(clientScopes).map((id) => [id, { id, secret: secret() }]));
  const publicClient = { id: 'berm-public', redirectUri: `${origin}/callback` };
  const introspector = { id: 'berm-resource', secret: secret() };

  const configuration: Configuration = {
    jwks: { keys: [own.privateJwk] },
    clients: [
      ...Object.values(clients).map((c) => ({
        client_id: c.id,
        client_secret: c.secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      })),
      {
        client_id: publicClient.id,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [publicClient.redirectUri],
      },
      ...Object.entries(options.publicClients ?? {}).map(([id, redirects]) => ({
        client_id: id,
        token_endpoint_auth_method: 'none' as const,
        grant_types: ['authorization_code'],
        response_types: ['code' as const],
        redirect_uris: [...redirects],
      })),
      {
        client_id: introspector.id,
        client_secret: introspector.secret,
        grant_types: [],
        response_types: [],
        redirect_uris: [],
      },
    ],
    findAccount: async (_ctx, sub) => (users.has(sub) ? { accountId: sub, claims: async () => ({ sub }) } : undefined),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      registration: { enabled: options.registration ?? false },
      // The resource server's client may ask about any token; others about their own alone.
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => client.clientId === introspector.id || token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        // Only the resources it was given; a client asking for another gets invalid_target.
        defaultResource: async () => resources[0]!,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: KoaContextWithOIDC, resource: string, client) => {
          if (!resources.includes(resource)) throw new errors.InvalidTarget();
          const allowed = clientScopes[client.clientId] ?? scopes;
          return {
            scope: scopes.filter((s) => allowed.includes(s)).join(' '),
            audience: resource,
            accessTokenTTL: ttl,
            accessTokenFormat: format,
            jwt: { sign: { alg: 'RS256', kid: own.kid } },
          };
        },
      },
    },
    pkce: { required: () => true },
    // Lifetimes of its own, so the provider does not warn of its defaults.
    ttl: {
      AccessToken: ttl,
      ClientCredentials: ttl,
      AuthorizationCode: 60,
      Grant: 3600,
      RefreshToken: 3600,
      Interaction: 600,
      Session: 3600,
    },
    interactions: { url: (_ctx, interaction) => `${path}/interaction/${interaction.uid}` },
  };
  const provider = new Provider(issuer, configuration);
  // Loopback over plain HTTP, as bermd accepts for a test's issuer.
  provider.proxy = false;
  const callback = provider.callback();

  const counts = new Map<string, number>();
  const jwksPath = `${path}/jwks`;

  /** The helper's interaction: the user is the `login_hint`; consent is every scope asked for. */
  async function interact(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const { prompt, params, session } = details;
    if (prompt.name === 'login') {
      if (options.loginForm === true && req.method !== 'POST') return loginPage(res, details.uid);
      const user = options.loginForm === true ? await formUser(req) : String(params.login_hint ?? '');
      if (!users.has(user)) {
        await provider.interactionFinished(req, res, { error: 'access_denied', error_description: `no user ${user}` });
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: user } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = details.grantId
      ? (await provider.Grant.find(details.grantId))!
      : new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
    const missing = prompt.details.missingResourceScopes as Record<string, string[]> | undefined;
    for (const [indicator, asked] of Object.entries(missing ?? {})) {
      const given = options.consent?.({ user: session!.accountId!, resource: indicator, scopes: asked }) ?? asked;
      const declined = asked.filter((scope) => !given.includes(scope));
      if (given.length > 0) grant.addResourceScope(indicator, asked.filter((scope) => given.includes(scope)).join(' '));
      if (declined.length > 0) grant.rejectResourceScope(indicator, declined.join(' '));
    }
    const missingOidc = prompt.details.missingOIDCScope as string[] | undefined;
    if (missingOidc !== undefined) grant.addOIDCScope(missingOidc.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /** The login form: a user name, posted back to the interaction. */
  function loginPage(res: ServerResponse, uid: string): void {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(
      `<!doctype html><title>Sign in</title><h1>Sign in to the test issuer</h1>` +
        `<form method="post" action="${path}/interaction/${encodeURIComponent(uid)}">` +
        `<label>User <input name="user" autocomplete="username"></label> <button type="submit">Sign in</button></form>`,
    );
  }

  /** The user a login form posted. */
  async function formUser(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('user') ?? '';
  }

  /**
   * Hands the provider `url` (under the issuer's path) as a request to its own routes: the provider finds
   * the path it is mounted at from `originalUrl`, and writes its endpoints' URLs under it.
   */
  function mount(req: IncomingMessage, url: string): void {
    (req as IncomingMessage & { originalUrl?: string }).originalUrl = url;
    req.url = url.slice(path.length) || '/';
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', origin);
    counts.set(url.pathname, (counts.get(url.pathname) ?? 0) + 1);
    const openidPath = `${path}/.well-known/openid-configuration`;
    if (url.pathname === `/.well-known/oauth-authorization-server${path}`) {
      if (!discovery.oauth) return void res.writeHead(404).end();
      // The same document as OpenID's: the provider writes it, under the name RFC 8414 gives it.
      mount(req, `${path}/.well-known/openid-configuration`);
    } else if (url.pathname === openidPath && !discovery.openid) {
      return void res.writeHead(404).end();
    } else if (url.pathname === jwksPath) {
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' });
      return void res.end(JSON.stringify({ keys: published }));
    } else if (url.pathname === `${path}/callback`) {
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in');
    } else if (path !== '' && (url.pathname === path || url.pathname.startsWith(`${path}/`))) {
      mount(req, req.url ?? '/');
    } else if (path !== '') {
      return void res.writeHead(404).end();
    }
    if (req.url?.startsWith('/interaction/')) {
      interact(req, res).catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(e));
      });
      return;
    }
    callback(req, res);
  });

  const tokenEndpoint = `${issuer}/token`;

  async function tokenRequest(body: URLSearchParams, auth?: { id: string; secret: string }): Promise<string> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (auth !== undefined)
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(auth.id)}:${encodeURIComponent(auth.secret)}`).toString('base64')}`;
    const response = await fetch(tokenEndpoint, { method: 'POST', headers, body });
    const answer = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
    if (!response.ok || answer.access_token === undefined)
      throw new Error(`the token endpoint answered ${response.status}: ${answer.error ?? ''} ${answer.error_description ?? ''}`);
    return answer.access_token;
  }

  return {
    issuer,
    origin,
    port,
    jwksUri: `${issuer}/jwks`,
    tokenEndpoint,
    introspectionEndpoint: `${issuer}/token/introspection`,
    resources,
    clients,
    publicClient,
    introspector,
    kid: own.kid,
    strangerKid: stranger.kid,

    async tokenFor({ scopes: asked = scopes, resource = resources[0]!, client = Object.keys(clients)[0]! } = {}) {
      const credentials = clients[client];
      if (credentials === undefined) throw new Error(`no confidential client ${client}`);
      const body = new URLSearchParams({ grant_type: 'client_credentials', resource });
      if (asked.length > 0) body.set('scope', asked.join(' '));
      return tokenRequest(body, credentials);
    },

    async userToken({ user, scopes: asked = scopes, resource = resources[0]! }) {
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const state = randomBytes(8).toString('hex');
      const authorize = new URL(`${issuer}/auth`);
      for (const [k, v] of Object.entries({
        client_id: publicClient.id,
        response_type: 'code',
        redirect_uri: publicClient.redirectUri,
        scope: asked.join(' '),
        resource,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state,
        login_hint: user,
      }))
        authorize.searchParams.set(k, v);
      // A browser's part: follow the redirects, carrying the cookies the server sets, to the redirect URI.
      const jar = new Map<string, string>();
      let next = authorize.href;
      for (let hop = 0; hop < 12; hop++) {
        const response = await fetch(next, {
          redirect: 'manual',
          headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
        });
        for (const line of response.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const eq = pair!.indexOf('=');
          jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
        }
        const location = response.headers.get('location');
        await response.arrayBuffer();
        if (location === null) throw new Error(`the authorization flow stopped at ${next} (${response.status})`);
        const target = new URL(location, next);
        if (target.href.startsWith(publicClient.redirectUri)) {
          const error = target.searchParams.get('error');
          if (error !== null)
            throw new Error(`the authorization was refused: ${error} ${target.searchParams.get('error_description') ?? ''}`);
          if (target.searchParams.get('state') !== state) throw new Error('the authorization answered another state');
          const code = target.searchParams.get('code')!;
          return tokenRequest(
            new URLSearchParams({
              grant_type: 'authorization_code',
              code,
              redirect_uri: publicClient.redirectUri,
              client_id: publicClient.id,
              code_verifier: verifier,
              resource,
            }),
          );
        }
        next = target.href;
      }
      throw new Error('the authorization flow did not reach the redirect URI');
    },

    async sign(claims = {}, { key = 'issuer', kid, alg = 'RS256', typ = 'at+jwt' } = {}) {
      const now = Math.floor(Date.now() / 1000);
      const client = Object.keys(clients)[0]!;
      const payload: Record<string, unknown> = {
        iss: issuer,
        aud: resources[0],
        sub: client,
        client_id: client,
        scope: scopes.join(' '),
        iat: now,
        exp: now + 300,
        jti: randomBytes(8).toString('hex'),
        ...claims,
      };
      for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
      const pair = key === 'issuer' ? own : stranger;
      const header = { alg, typ, kid: kid ?? pair.kid };
      if (alg === 'none') return unsecured(header, payload);
      return new SignJWT(payload as JWTPayload).setProtectedHeader(header).sign(pair.privateKey);
    },

    async publishStranger() {
      if (!published.includes(stranger.publicJwk)) published.push(stranger.publicJwk);
    },

    requests: (at) => counts.get(at) ?? 0,
    jwksFetches: () => counts.get(jwksPath) ?? 0,

    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
