// The resource server's parts on their own (auth/): where metadata is looked for, the metadata's URL,
// who a token's claims name, and the JWT verifier's key set against a real authorization server
// (test/helpers/oidc.ts) when its keys rotate, with the cooldown the daemon cannot shorten.
import { describe, expect, it } from 'vitest';
import { startIssuer } from '../../../test/helpers/oidc.js';
import { standIn } from '../../../test/helpers/loopback.js';
import {
  discover,
  JwtVerifier,
  looksLikeJwt,
  metadataUrls,
  principalOfClaims,
  resourceMetadataPaths,
  resourceMetadataUrl,
} from '../dist/auth/index.js';

describe('where the metadata of an issuer is looked for', () => {
  it('at the root: RFC 8414 first, then OpenID', () => {
    expect(metadataUrls('https://id.example.com')).toEqual([
      'https://id.example.com/.well-known/oauth-authorization-server',
      'https://id.example.com/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://id.example.com/')).toEqual(metadataUrls('https://id.example.com'));
  });

  it('under a path: the well-known name inserted before it (RFC 8414 §3.1), then OpenID inserted, then OpenID after it', () => {
    expect(metadataUrls('https://id.example.com/tenant/1')).toEqual([
      'https://id.example.com/.well-known/oauth-authorization-server/tenant/1',
      'https://id.example.com/.well-known/openid-configuration/tenant/1',
      'https://id.example.com/tenant/1/.well-known/openid-configuration',
    ]);
  });

  it('refuses a document that names another issuer, and one whose jwks_uri is plain http beyond loopback', async () => {
    let doc: Record<string, unknown> = {};
    const { server, url } = await standIn((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc)),
    );
    try {
      doc = { issuer: 'https://impostor.example.test', jwks_uri: `${url}/jwks` };
      await expect(discover(url)).rejects.toMatchObject({
        code: 'auth-unavailable',
        message: expect.stringContaining('names the issuer "https://impostor.example.test", not'),
      });
      doc = { issuer: url, jwks_uri: 'http://keys.example.test/jwks' };
      await expect(discover(url)).rejects.toThrow('gives jwks_uri "http://keys.example.test/jwks", which is not an https:// URL');
      doc = { issuer: url, jwks_uri: `${url}/jwks` };
      expect(await discover(url)).toEqual({ issuer: url, jwksUri: `${url}/jwks`, from: `${url}/.well-known/oauth-authorization-server` });
    } finally {
      server.close();
    }
  });
});

describe('the protected resource metadata of a resource', () => {
  it('is at the well-known name with the resource path after it, and also at the bare name', () => {
    expect(resourceMetadataUrl('https://berm.example.com/mcp')).toBe('https://berm.example.com/.well-known/oauth-protected-resource/mcp');
    expect(resourceMetadataPaths('https://berm.example.com/mcp')).toEqual([
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]);
    expect(resourceMetadataUrl('https://berm.example.com/')).toBe('https://berm.example.com/.well-known/oauth-protected-resource');
    expect(resourceMetadataPaths('https://berm.example.com')).toEqual(['/.well-known/oauth-protected-resource']);
  });
});

describe("who a token's claims name", () => {
  it('a user by its subject, a client by its id when the token names no other subject (client credentials)', () => {
    expect(principalOfClaims({ sub: 'alice', client_id: 'app', scope: 'berm:read' })).toMatchObject({ name: 'alice' });
    expect(principalOfClaims({ sub: 'ci-bot', client_id: 'ci-bot', scope: 'berm:read' })).toMatchObject({ name: 'ci-bot' });
    expect(principalOfClaims({ client_id: 'ci-bot' })).toMatchObject({ name: 'ci-bot' });
    expect(principalOfClaims({ scope: 'berm:read' })).toEqual({ refused: 'the token names no subject (sub) and no client (client_id)' });
  });

  it('writes a character a log line or a header would not carry as %XX, so two subjects stay two names', () => {
    expect(principalOfClaims({ sub: 'auth0|42' })).toMatchObject({ name: 'auth0%7C42' });
    expect(principalOfClaims({ sub: 'a b"c' })).toMatchObject({ name: 'a%20b%22c' });
    expect(principalOfClaims({ sub: 'é' })).toMatchObject({ name: '%C3%A9' });
    expect(principalOfClaims({ sub: 'x'.repeat(129) })).toHaveProperty('refused');
  });

  it('holds the berm scopes of scope (space-separated) and scp (an array or a string), and no other', () => {
    const scopes = (claims: Record<string, unknown>): string[] => {
      const principal = principalOfClaims({ sub: 's', ...claims });
      return 'refused' in principal ? [] : [...principal.scopes].sort();
    };
    expect(scopes({ scope: 'openid berm:read berm:call:echo email' })).toEqual(['berm:call:echo', 'berm:read']);
    expect(scopes({ scp: ['berm:deploy', 'profile'] })).toEqual(['berm:deploy']);
    expect(scopes({ scp: 'berm:force berm:deploy' })).toEqual(['berm:deploy', 'berm:force']);
    expect(scopes({ scope: 'berm:call:no.dots' })).toEqual([]);
    expect(scopes({})).toEqual([]);
  });
});

describe('the JWT verifier', () => {
  it('tells a signed JWT from an opaque token by its shape', () => {
    expect(looksLikeJwt('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toBe(true);
    expect(looksLikeJwt('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.')).toBe(true);
    expect(looksLikeJwt('berm_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG')).toBe(false);
    expect(looksLikeJwt('a.b.c.d.e')).toBe(false);
  });

  it('finds a key the authorization server published after it fetched the set, by fetching it again for the unknown kid', async () => {
    const as = await startIssuer();
    try {
      const verifier = new JwtVerifier({ issuer: as.issuer, resource: as.resources[0]!, jwksUri: as.jwksUri, cooldownMs: 0 });
      expect(await verifier.verify(await as.tokenFor({ scopes: ['berm:read'] }))).toMatchObject({ name: 'berm-ci' });
      expect(as.jwksFetches()).toBe(1);
      // A rotation: the new key is published, then used.
      await as.publishStranger();
      const rotated = await as.sign({ sub: 'after-rotation' }, { key: 'stranger' });
      expect(await verifier.verify(rotated)).toMatchObject({ name: 'after-rotation' });
      expect(as.jwksFetches()).toBe(2);
      // Held from now on: no more fetches for either key.
      expect(await verifier.verify(rotated)).toMatchObject({ name: 'after-rotation' });
      expect(as.jwksFetches()).toBe(2);
    } finally {
      await as.close();
    }
  });

  it('fetches the set no more than once per cooldown, however many unknown kids come', async () => {
    const as = await startIssuer();
    try {
      const verifier = new JwtVerifier({ issuer: as.issuer, resource: as.resources[0]!, jwksUri: as.jwksUri, cooldownMs: 3_600_000 });
      for (const sub of ['a', 'b', 'c']) {
        expect(await verifier.verify(await as.sign({ sub }, { key: 'stranger' }))).toEqual({
          refused: "no key of the authorization server's key set matches the token's kid",
        });
      }
      expect(as.jwksFetches()).toBe(1);
      // Even once the key is published: the cooldown holds until it is over.
      await as.publishStranger();
      expect(await verifier.verify(await as.sign({}, { key: 'stranger' }))).toHaveProperty('refused');
      expect(as.jwksFetches()).toBe(1);
    } finally {
      await as.close();
    }
  });

  it('keeps a token it accepted until it expires, and verifies nothing again for it', async () => {
    const as = await startIssuer();
    const token = await as.tokenFor({ scopes: ['berm:read'] });
    const verifier = new JwtVerifier({ issuer: as.issuer, resource: as.resources[0]!, jwksUri: as.jwksUri });
    const first = await verifier.verify(token);
    expect(first).toMatchObject({ name: 'berm-ci' });
    await as.close();
    // The very principal found the first time (verifying again would make another), the server gone or not.
    expect(await verifier.verify(token)).toBe(first);
  });

  it('answers auth-unavailable, not a refusal, when the key set cannot be fetched', async () => {
    const as = await startIssuer();
    const token = await as.tokenFor();
    const { issuer, jwksUri } = as;
    await as.close();
    const verifier = new JwtVerifier({ issuer, resource: as.resources[0]!, jwksUri });
    await expect(verifier.verify(token)).rejects.toMatchObject({
      code: 'auth-unavailable',
      message: expect.stringContaining(`the authorization server's keys (${jwksUri}) cannot be fetched`),
    });
  });
});
