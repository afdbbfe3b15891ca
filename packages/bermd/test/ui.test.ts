// The page bermd serves at `/` (@berm/ui's build): the HTML with its Content-Security-Policy, the
// hashed assets cached for good, no token needed for either while every API route still asks; `/page.json`
// naming the client the page signs in as, and the CSP letting it reach that authorization server alone.
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uiDir } from '@berm/ui';
import { startIssuer, TEST_RESOURCE, type TestIssuer } from '../../../test/helpers/oidc.js';
import { exited, launchDaemon, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';

describe('the page at /', () => {
  let d: RunningDaemon;
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('bermd-ui-');
    await writeFile(path.join(dir, 'token'), 'page-token\n');
    d = await startDaemon({ args: ['--token-file', path.join(dir, 'token')] });
  });
  afterAll(async () => {
    await d.stop();
    await removeDir(d.stateDir);
    await removeDir(dir);
  });

  it('serves index.html without the token, with a strict CSP and no caching', async () => {
    const res = await fetch(`${d.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp.split('; ')).toEqual(
      expect.arrayContaining([
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "frame-ancestors 'none'",
      ]),
    );
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    // Nothing inline for the CSP to block: the script and stylesheet are files of their own.
    expect(html).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect((await fetch(`${d.url}/`, { method: 'HEAD' })).status).toBe(200);
  });

  it('serves every built asset as immutable, and nothing outside the build', async () => {
    const assets = await readdir(path.join(uiDir, 'assets'));
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    for (const asset of assets) {
      const res = await fetch(`${d.url}/assets/${asset}`);
      expect([asset, res.status]).toEqual([asset, 200]);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy')).toBeNull();
    }
    for (const p of ['/assets/missing.js', '/assets/../package.json', '/package.json', '/index.js']) {
      const res = await fetch(`${d.url}${p}`);
      expect([p, res.status]).toEqual([p, 401]);
    }
  });

  it('keeps asking for the token on every route the page reads', async () => {
    for (const p of ['/harnesses', '/events', '/harnesses/x']) {
      const res = await fetch(`${d.url}${p}`);
      expect([p, res.status]).toEqual([p, 401]);
    }
    const mcp = await fetch(`${d.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(mcp.status).toBe(401);
    const listed = await fetch(`${d.url}/harnesses`, { headers: { authorization: 'Bearer page-token' } });
    expect(listed.status).toBe(200);
  });
});

describe('the page signing in through an authorization server', () => {
  let issuer: TestIssuer;
  let d: RunningDaemon;
  beforeAll(async () => {
    issuer = await startIssuer();
    d = await startDaemon({ args: ['--oauth-issuer', issuer.issuer, '--resource', TEST_RESOURCE, '--oauth-page-client', 'berm-page'] });
  });
  afterAll(async () => {
    await d.stop();
    await removeDir(d.stateDir);
    await issuer.close();
  });

  it('tells the page its client at /page.json, without the token', async () => {
    const res = await fetch(`${d.url}/page.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(await res.json()).toEqual({ oauth_client_id: 'berm-page' });
    // The API still asks for a token, and says where to get one.
    const listed = await fetch(`${d.url}/harnesses`);
    expect(listed.status).toBe(401);
    expect(listed.headers.get('www-authenticate')).toContain('resource_metadata="');
  });

  it("lets the page connect to the issuer's origin and to no other, and send forms nowhere", async () => {
    const csp = (await fetch(`${d.url}/`)).headers.get('content-security-policy')!.split('; ');
    expect(csp).toContain(`connect-src 'self' ${issuer.origin}`);
    expect(csp.filter((d) => d.startsWith('connect-src'))).toHaveLength(1);
    expect(csp).toContain("form-action 'none'");
    expect(csp).toContain("script-src 'self'");
  });
});

describe('the page of a bermd without a page client', () => {
  let d: RunningDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d.stop();
    await removeDir(d.stateDir);
  });

  it('is told it has none, and connects to bermd alone', async () => {
    expect(await (await fetch(`${d.url}/page.json`)).json()).toEqual({ oauth_client_id: null });
    const csp = (await fetch(`${d.url}/`)).headers.get('content-security-policy')!.split('; ');
    expect(csp).toContain("connect-src 'self'");
  });
});

describe('--oauth-page-client', () => {
  it('is refused at start without an authorization server (exit 2), saying what it needs', async () => {
    const launched = await launchDaemon({ command: ['--oauth-page-client', 'berm-page'] });
    expect(await exited(launched.process)).toBe(2);
    expect(launched.stderr()).toContain(
      '--oauth-page-client berm-page: the page signs in through an authorization server; give --oauth-issuer URL and --resource URL too',
    );
  });
});
