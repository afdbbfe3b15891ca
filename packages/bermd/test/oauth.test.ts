// bermd as an OAuth 2.1 resource server, end to end: a real bermd process started with --oauth-issuer and
// --resource, a real authorization server (oidc-provider, test/helpers/oidc.ts) issuing its tokens, spoken
// to over HTTP with fetch and the official MCP SDK client.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicImage } from '../../../test/helpers/guest.js';
import { closedPort } from '../../../test/helpers/loopback.js';
import { BERM_SCOPES, startIssuer, TEST_RESOURCE, type TestIssuer } from '../../../test/helpers/oidc.js';
import { exited, launchDaemon, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect } from './mcp-client.js';
import { rawRequest } from './raw-http.js';
import { tokenSha256 } from '../dist/auth/index.js';

const OTHER_RESOURCE = 'https://other.example.test/mcp';
const METADATA_URL = 'https://berm.example.test/.well-known/oauth-protected-resource/mcp';
const PRM = {
  resource: TEST_RESOURCE,
  bearer_methods_supported: ['header'],
  scopes_supported: [...BERM_SCOPES],
  resource_name: 'berm',
};

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

interface Answer {
  status: number;
  challenge: string | null;
  body: string;
}

async function get(url: string, token?: string): Promise<Answer> {
  const res = await fetch(url, { headers: token === undefined ? {} : bearer(token) });
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: await res.text() };
}

/** An MCP `initialize` POSTed to /mcp: the first thing a client sends. */
async function initialize(base: string, token?: string): Promise<Answer> {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : bearer(token)),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth-test', version: '0' } },
    }),
  });
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: await res.text() };
}

function oauthArgs(as: TestIssuer, extra: string[] = []): string[] {
  return ['--oauth-issuer', as.issuer, '--resource', TEST_RESOURCE, ...extra];
}

describe('bermd with --oauth-issuer', { timeout: 60_000 }, () => {
  let as: TestIssuer;
  let other: TestIssuer;
  let d: RunningDaemon;
  let dir: string;
  const staticToken = `berm_${randomBytes(32).toString('base64url')}`;

  beforeAll(async () => {
    as = await startIssuer({
      resources: [TEST_RESOURCE, OTHER_RESOURCE],
      scopes: [...BERM_SCOPES, 'berm:call:basic'],
      clients: {
        deployer: ['berm:deploy'],
        reader: ['berm:read'],
        caller: ['berm:call'],
        'basic-caller': ['berm:call:basic'],
        everything: [...BERM_SCOPES],
      },
      users: ['alice'],
    });
    other = await startIssuer();
    dir = await tempDir('bermd-oauth-');
    const access = path.join(dir, 'access.json');
    await writeFile(access, JSON.stringify([{ name: 'ci', token_sha256: tokenSha256(staticToken), scopes: ['berm:read'] }]));
    d = await startDaemon({ args: oauthArgs(as, ['--access', access]) });
    const res = await fetch(`${d.url}/harnesses/basic`, {
      method: 'PUT',
      body: (await basicImage()).bytes,
      headers: bearer(await as.tokenFor({ client: 'deployer', scopes: ['berm:deploy'] })),
    });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await d?.stop();
    await removeDir(d?.stateDir ?? '');
    await removeDir(dir);
    await as?.close();
    await other?.close();
  });

  it("found the authorization server's metadata by RFC 8414 at start, before it listened", () => {
    const found = d.log().find((e) => e.msg === 'authorization server found: its tokens are verified');
    expect(found).toMatchObject({
      issuer: as.issuer,
      metadata: `${as.origin}/.well-known/oauth-authorization-server`,
      jwks_uri: as.jwksUri,
    });
    expect(as.requests('/.well-known/openid-configuration')).toBe(0);
  });

  it('serves its protected resource metadata without a token, at the bare well-known name and with the path of the resource', async () => {
    for (const at of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await fetch(`${d.url}${at}`);
      expect([at, res.status]).toEqual([at, 200]);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ ...PRM, authorization_servers: [as.issuer] });
    }
    // Public, but the Host and Origin checks apply to it as to every route.
    const foreign = await rawRequest(d.url, { path: '/.well-known/oauth-protected-resource/mcp', headers: { host: 'evil.example.test' } });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ error: { code: 'forbidden-host' } });
  });

  it('answers a request without a token 401 with a challenge that points to the metadata, on the control API and on /mcp', async () => {
    const bare = `Bearer resource_metadata="${METADATA_URL}"`;
    const control = await get(`${d.url}/harnesses`);
    expect([control.status, control.challenge]).toEqual([401, bare]);
    expect(JSON.parse(control.body)).toMatchObject({ error: { code: 'unauthorized' } });
    const mcp = await initialize(d.url);
    expect([mcp.status, mcp.challenge]).toEqual([401, bare]);
  });

  it('lets a token do exactly what its scopes allow, and refuses the rest 403 naming the scope', async () => {
    const reader = await as.tokenFor({ client: 'reader', scopes: ['berm:read'] });
    expect((await get(`${d.url}/harnesses`, reader)).status).toBe(200);
    const put = await fetch(`${d.url}/harnesses/more`, { method: 'PUT', body: (await basicImage()).bytes, headers: bearer(reader) });
    expect(put.status).toBe(403);
    expect(put.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${METADATA_URL}", error="insufficient_scope", scope="berm:read berm:deploy"`,
    );
    // Named as the client it is: the token came by client credentials.
    expect(await put.json()).toEqual({
      error: { code: 'insufficient-scope', scope: 'berm:deploy', message: 'reader does not hold the scope berm:deploy this request needs' },
    });
    const mcp = await initialize(d.url, reader);
    expect(mcp.status).toBe(403);
    expect(mcp.challenge).toContain('error="insufficient_scope", scope="berm:read berm:call"');

    const caller = await as.tokenFor({ client: 'caller', scopes: ['berm:call'] });
    const refused = await get(`${d.url}/harnesses`, caller);
    expect([refused.status, JSON.parse(refused.body).error.scope]).toEqual([403, 'berm:read']);
    const c = await connect(d.url, bearer(caller));
    try {
      const result = await c.client.callTool({ name: 'basic.echo', arguments: { text: 'through oauth' } });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain('through oauth');
    } finally {
      await c.close();
    }

    // A token for one harness calls it, and reads nothing else.
    const one = await as.tokenFor({ client: 'basic-caller', scopes: ['berm:call:basic'] });
    const c1 = await connect(d.url, bearer(one));
    try {
      const result = await c1.client.callTool({ name: 'basic.echo', arguments: { n: 1 } });
      expect(result.isError).toBeFalsy();
    } finally {
      await c1.close();
    }
    expect((await get(`${d.url}/harnesses`, one)).status).toBe(403);
  });

  it("names a user's principal by its subject, from a token of the authorization code flow", async () => {
    const token = await as.userToken({ user: 'alice', scopes: ['berm:call'] });
    const refused = await get(`${d.url}/harnesses`, token);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.message).toBe('alice does not hold the scope berm:read this request needs');
    const c = await connect(d.url, bearer(token));
    try {
      expect((await c.client.listTools()).tools.map((t) => t.name)).toContain('basic.echo');
    } finally {
      await c.close();
    }
  });

  it('still serves the static principals of --access, and refuses a static token the file does not hold like any other', async () => {
    expect((await get(`${d.url}/harnesses`, staticToken)).status).toBe(200);
    const unknown = await get(`${d.url}/harnesses`, `berm_${randomBytes(32).toString('base64url')}`);
    expect(unknown.status).toBe(401);
    expect(unknown.challenge).toContain('error="invalid_token", error_description="the token is not one this bermd holds"');
  });

  it('refuses 401 invalid_token a token signed by another key, expired, for another audience, from another issuer, unsigned or HS256, and says why without a harness name', async () => {
    const now = Math.floor(Date.now() / 1000);
    const hs256 = await new SignJWT({ iss: as.issuer, aud: TEST_RESOURCE, sub: 'x', scope: 'berm:call', exp: now + 300 })
      .setProtectedHeader({ alg: 'HS256', kid: as.kid, typ: 'at+jwt' })
      .sign(randomBytes(32));
    const cases: [string, string, string][] = [
      ['another key', await as.sign({}, { key: 'stranger', kid: as.kid }), "signature does not verify with the authorization server's key"],
      ['expired', await as.sign({ iat: now - 7200, exp: now - 3600 }), 'the token has expired'],
      ['another audience', await as.tokenFor({ client: 'everything', resource: OTHER_RESOURCE }), `does not include ${TEST_RESOURCE}`],
      ['another issuer', await as.sign({ iss: other.issuer }), `the token was not issued by ${as.issuer}`],
      ['another server altogether', await other.tokenFor(), "no key of the authorization server's key set matches"],
      ['alg none', await as.sign({}, { alg: 'none' }), 'signed with an algorithm bermd does not accept'],
      ['HS256', hs256, 'signed with an algorithm bermd does not accept'],
      ['not yet valid', await as.sign({ nbf: now + 3600 }), 'not valid yet'],
      ['a token of another kind', await as.sign({}, { typ: 'dpop+jwt' }), 'not an access token'],
    ];
    for (const [what, token, reason] of cases) {
      for (const answer of [await get(`${d.url}/harnesses`, token), await initialize(d.url, token)]) {
        expect([what, answer.status]).toEqual([what, 401]);
        expect(answer.challenge, what).toMatch(
          new RegExp(`^Bearer resource_metadata="${METADATA_URL}", error="invalid_token", error_description="[^"]*${escape(reason)}`),
        );
        expect(answer.body, what).not.toContain('basic');
        expect(answer.body, what).not.toContain(token);
      }
      expect(d.stderr(), what).not.toContain(token);
    }
    const refusals = d.log().filter((e) => e.msg === 'a token was refused');
    for (const [what, , reason] of cases)
      expect(
        refusals.some((e) => String(e.reason).includes(reason)),
        what,
      ).toBe(true);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe("a token whose kid is not in the authorization server's key set", { timeout: 60_000 }, () => {
  it('is refused once the key set, fetched for it, has no such key; a token of a key the set holds is then accepted', async () => {
    const as = await startIssuer();
    const d = await startDaemon({ args: oauthArgs(as) });
    try {
      // Nothing verified yet: the key set is fetched when first needed, not at start.
      expect(as.jwksFetches()).toBe(0);
      const first = await get(`${d.url}/harnesses`, await as.sign({}, { key: 'stranger' }));
      expect(first.status).toBe(401);
      expect(first.challenge).toContain("no key of the authorization server's key set matches the token's kid");
      expect(as.jwksFetches()).toBe(1);
      expect((await get(`${d.url}/harnesses`, await as.tokenFor())).status).toBe(200);
      // The cooldown between fetches for unknown kids, and a rotation, are oauth-verifier.test.ts's.
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
      await as.close();
    }
  });
});

describe('discovery by OpenID configuration, for an issuer with a path', { timeout: 60_000 }, () => {
  it('tries RFC 8414 with the path inserted, then OpenID with the path inserted, then after the path, and verifies what it found', async () => {
    const as = await startIssuer({ path: '/tenant', discovery: { oauth: false } });
    const d = await startDaemon({ args: oauthArgs(as) });
    try {
      const found = await d.waitForLog((e) => e.msg === 'authorization server found: its tokens are verified');
      expect(found.metadata).toBe(`${as.origin}/tenant/.well-known/openid-configuration`);
      expect(as.requests('/.well-known/oauth-authorization-server/tenant')).toBe(1);
      expect(as.requests('/.well-known/openid-configuration/tenant')).toBe(1);
      const answer = await get(`${d.url}/harnesses`, await as.tokenFor({ scopes: ['berm:read'] }));
      expect([answer.status, answer.body]).toEqual([200, '[]']);
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
      await as.close();
    }
  });
});

describe('an authorization server out of reach at start', { timeout: 60_000 }, () => {
  it('starts all the same, answers its tokens 503 auth-unavailable, serves static tokens, and verifies once the server answers', async () => {
    const port = await closedPort();
    const dir = await tempDir('bermd-oauth-late-');
    const staticToken = `berm_${randomBytes(32).toString('base64url')}`;
    const access = path.join(dir, 'access.json');
    await writeFile(access, JSON.stringify([{ name: 'ci', token_sha256: tokenSha256(staticToken), scopes: ['berm:read'] }]));
    const issuer = `http://127.0.0.1:${port}`;
    const d = await startDaemon({ args: ['--oauth-issuer', issuer, '--resource', TEST_RESOURCE, '--access', access] });
    let as: TestIssuer | undefined;
    try {
      const warned = d.log().find((e) => String(e.msg).startsWith('the authorization server cannot be reached'));
      expect(warned).toMatchObject({ issuer, attempt: 1 });
      const early = await get(`${d.url}/harnesses`, 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln');
      expect(early.status).toBe(503);
      expect(JSON.parse(early.body)).toMatchObject({ error: { code: 'auth-unavailable', issuer } });
      expect(JSON.parse(early.body).error.message).toContain(`has not reached the authorization server ${issuer} yet`);
      expect((await get(`${d.url}/harnesses`, staticToken)).status).toBe(200);
      expect((await get(`${d.url}/harnesses`)).status).toBe(401);
      // A token of bermd's own making is bermd's to judge: one the file does not hold is refused, 401.
      expect((await get(`${d.url}/harnesses`, `berm_${randomBytes(32).toString('base64url')}`)).status).toBe(401);

      as = await startIssuer({ port });
      // A token arriving once the retry's first delay has passed sends bermd to look at once, rather than
      // at its next retry; whatever this one is answered, the log says when the server is found.
      await get(`${d.url}/harnesses`, 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln');
      await d.waitForLog((e) => e.msg === 'authorization server found: its tokens are verified');
      expect((await get(`${d.url}/harnesses`, await as.tokenFor({ scopes: ['berm:read'] }))).status).toBe(200);
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
      await removeDir(dir);
      await as?.close();
    }
  });
});

describe('opaque tokens through introspection', { timeout: 60_000 }, () => {
  let as: TestIssuer;
  let d: RunningDaemon;
  let dir: string;
  beforeAll(async () => {
    as = await startIssuer({ accessTokenFormat: 'opaque', clients: { reader: ['berm:read'] } });
    dir = await tempDir('bermd-introspect-');
    const client = path.join(dir, 'client');
    await writeFile(client, `${as.introspector.id}:${as.introspector.secret}\n`, { mode: 0o600 });
    d = await startDaemon({ args: oauthArgs(as, ['--oauth-introspection-client', client]) });
  });
  afterAll(async () => {
    await d?.stop();
    await removeDir(d?.stateDir ?? '');
    await removeDir(dir);
    await as?.close();
  });

  it('asks the introspection endpoint once about an opaque token, and holds the answer while the token lives', async () => {
    const token = await as.tokenFor({ client: 'reader', scopes: ['berm:read'] });
    const asked = as.requests('/token/introspection');
    expect((await get(`${d.url}/harnesses`, token)).status).toBe(200);
    expect(as.requests('/token/introspection')).toBe(asked + 1);
    const refused = await fetch(`${d.url}/harnesses/x`, { method: 'DELETE', headers: bearer(token) });
    expect([refused.status, ((await refused.json()) as { error: { scope: string } }).error.scope]).toEqual([403, 'berm:deploy']);
    expect(as.requests('/token/introspection')).toBe(asked + 1);
  });

  it('refuses a token the authorization server does not know, never asks about a static token, and never logs its own secret', async () => {
    const refused = await get(`${d.url}/harnesses`, randomBytes(32).toString('base64url'));
    expect(refused.status).toBe(401);
    expect(refused.challenge).toContain('the authorization server says the token is not active');
    expect(d.stderr()).not.toContain(as.introspector.secret);
    // One of bermd's own static tokens is never sent to the authorization server.
    const asked = as.requests('/token/introspection');
    expect((await get(`${d.url}/harnesses`, `berm_${randomBytes(32).toString('base64url')}`)).status).toBe(401);
    expect(as.requests('/token/introspection')).toBe(asked);
  });
});

describe('the resource server flags at start', { timeout: 60_000 }, () => {
  async function refusedStart(args: string[]): Promise<string> {
    const launched = await launchDaemon({ command: args });
    expect(await exited(launched.process)).toBe(2);
    expect(launched.stdout()).toBe('');
    return launched.stderr();
  }

  it('refuses an issuer or resource over plain http beyond loopback, and each without the other (exit 2)', async () => {
    expect(await refusedStart(['--oauth-issuer', 'http://id.example.test', '--resource', TEST_RESOURCE])).toContain(
      '--oauth-issuer http://id.example.test: must be https:// (plain http:// only on loopback',
    );
    expect(await refusedStart(['--oauth-issuer', 'https://id.example.test', '--resource', 'http://berm.example.test/mcp'])).toContain(
      '--resource http://berm.example.test/mcp: must be https://',
    );
    expect(await refusedStart(['--oauth-issuer', 'https://id.example.test'])).toContain(
      '--oauth-issuer https://id.example.test: needs --resource URL',
    );
    expect(await refusedStart(['--resource', TEST_RESOURCE])).toContain('give --oauth-issuer URL too');
    expect(await refusedStart(['--oauth-issuer', 'https://id.example.test/?tenant=1', '--resource', TEST_RESOURCE])).toContain(
      'must have no query (?) or fragment (#)',
    );
  });

  it('counts --oauth-issuer as auth for listening beyond loopback', async () => {
    const as = await startIssuer();
    const state = await tempDir();
    try {
      // 0.0.0.0 is not loopback; the issuer alone lets bermd listen there (without it, see http.test.ts).
      const d = await startDaemon({ command: ['--listen', '0.0.0.0:0', '--state', state, ...oauthArgs(as)] });
      expect((await get(`http://127.0.0.1:${d.port}/harnesses`)).status).toBe(401);
      await d.stop();
      expect(await refusedStart(['--listen', '0.0.0.0:0', '--state', state])).toContain('--oauth-issuer URL');
    } finally {
      await removeDir(state);
      await as.close();
    }
  });
});
