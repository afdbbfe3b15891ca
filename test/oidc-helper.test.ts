// The test authorization server (helpers/oidc.ts) does what the tests that lean on it assume: its
// discovery documents, tokens bound to a resource with the scopes asked, the authorization code flow for a
// named user, introspection of opaque tokens, and the tokens it signs itself.
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIssuer, TEST_RESOURCE, type TestIssuer } from './helpers/oidc.js';

describe('the test authorization server', () => {
  let as: TestIssuer;
  beforeAll(async () => {
    as = await startIssuer({ clients: { 'berm-ci': ['berm:read', 'berm:call'] }, users: ['alice'] });
  });
  afterAll(async () => {
    await as.close();
  });

  const verify = (token: string) =>
    jwtVerify(token, createRemoteJWKSet(new URL(as.jwksUri)), { issuer: as.issuer, audience: TEST_RESOURCE });

  it('serves its metadata at both well-known names, naming itself', async () => {
    for (const at of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const doc = (await (await fetch(`${as.origin}${at}`)).json()) as Record<string, unknown>;
      expect(doc.issuer).toBe(as.issuer);
      expect(doc.jwks_uri).toBe(as.jwksUri);
      expect(doc.introspection_endpoint).toBe(as.introspectionEndpoint);
      expect(doc.token_endpoint).toBe(as.tokenEndpoint);
    }
  });

  it('gives a client by client credentials a JWT for the resource, with the scopes asked that the client may have', async () => {
    const token = await as.tokenFor({ scopes: ['berm:read', 'berm:deploy'] });
    expect(decodeProtectedHeader(token).kid).toBe(as.kid);
    const { payload } = await verify(token);
    expect(payload).toMatchObject({ iss: as.issuer, aud: TEST_RESOURCE, sub: 'berm-ci', client_id: 'berm-ci', scope: 'berm:read' });
    await expect(as.tokenFor({ resource: 'https://elsewhere.example.test/mcp' })).rejects.toThrow('invalid_target');
  });

  it('gives a user of its account store a token by the authorization code flow with PKCE, and refuses a stranger', async () => {
    const token = await as.userToken({ user: 'alice', scopes: ['berm:call'] });
    const { payload } = await verify(token);
    expect(payload).toMatchObject({ sub: 'alice', client_id: as.publicClient.id, scope: 'berm:call', aud: TEST_RESOURCE });
    await expect(as.userToken({ user: 'mallory' })).rejects.toThrow('access_denied');
  });

  it('signs tokens of its own making with its key, or with a stranger key it publishes only when told', async () => {
    const made = await as.sign({ sub: 'someone', scope: 'berm:read' });
    expect((await verify(made)).payload).toMatchObject({ sub: 'someone', scope: 'berm:read' });
    const before = as.jwksFetches();
    const strange = await as.sign({}, { key: 'stranger' });
    await expect(verify(strange)).rejects.toThrow();
    expect(as.jwksFetches()).toBeGreaterThan(before);
    await as.publishStranger();
    expect((await verify(strange)).payload.iss).toBe(as.issuer);
    expect((await as.sign({}, { alg: 'none' })).endsWith('.')).toBe(true);
  });
});

describe('a test authorization server of opaque tokens, under a path', () => {
  let as: TestIssuer;
  beforeAll(async () => {
    as = await startIssuer({ accessTokenFormat: 'opaque', path: '/tenant', discovery: { openid: false } });
  });
  afterAll(async () => {
    await as.close();
  });

  it('serves RFC 8414 metadata with the path inserted, and no OpenID configuration when told', async () => {
    expect(as.issuer).toBe(`${as.origin}/tenant`);
    const doc = (await (await fetch(`${as.origin}/.well-known/oauth-authorization-server/tenant`)).json()) as Record<string, unknown>;
    expect(doc).toMatchObject({ issuer: as.issuer, jwks_uri: as.jwksUri, token_endpoint: as.tokenEndpoint });
    expect(as.jwksUri).toBe(`${as.origin}/tenant/jwks`);
    expect((await fetch(`${as.issuer}/.well-known/openid-configuration`)).status).toBe(404);
  });

  it('tells its resource server client what an opaque token is, and says nothing of one it did not issue', async () => {
    const token = await as.tokenFor({ scopes: ['berm:deploy'] });
    expect(token.split('.')).toHaveLength(1);
    const ask = async (value: string) => {
      const response = await fetch(as.introspectionEndpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${as.introspector.id}:${as.introspector.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token: value }),
      });
      return (await response.json()) as Record<string, unknown>;
    };
    expect(await ask(token)).toMatchObject({
      active: true,
      scope: 'berm:deploy',
      aud: TEST_RESOURCE,
      client_id: 'berm-ci',
      iss: as.issuer,
    });
    expect(await ask('not-a-token-it-issued')).toEqual({ active: false });
  });
});
