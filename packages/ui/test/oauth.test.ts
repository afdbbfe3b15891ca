// The page signing in through a real authorization server (oidc-provider, test/helpers/oidc.ts) in a
// real browser, against a real bermd started with --oauth-issuer, --resource and --oauth-page-client:
// the authorization code flow with PKCE through the server's login form, back to the page, which names
// the principal and lists what its scopes allow; the access token in no storage and no cookie; the
// page's CSP letting it reach that server's origin and no other; a reload, which forgets the token,
// signing in again without the form; and an expired token replaced by signing in again.
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { until } from '../../bermd/test/replicas.js';
import { seedHarness } from '../../bermd/test/seed.js';
import { closedPort } from '../../../test/helpers/loopback.js';
import { startIssuer, TEST_RESOURCE, type TestIssuer } from '../../../test/helpers/oidc.js';
import { launch, openPage, screenshotDir, type Watched } from './browser.js';
import { weatherImage } from './fixtures.js';

const PAGE_CLIENT = 'berm-page';
/** What the server grants alice: to read, and no more. */
const GRANTED = ['berm:read'];

let d: RunningDaemon;
let issuer: TestIssuer;
let browser: Browser;

beforeAll(async () => {
  // The page's redirect URI names bermd's port, which the server must know first: one chosen now.
  const port = await closedPort();
  issuer = await startIssuer({
    scopes: GRANTED,
    users: ['alice'],
    publicClients: { [PAGE_CLIENT]: [`http://127.0.0.1:${port}/`] },
    loginForm: true,
  });
  const stateDir = await tempDir('berm-ui-oauth-');
  await seedHarness(stateDir, 'weather', await weatherImage(1));
  [d, browser] = await Promise.all([
    startDaemon({
      port,
      stateDir,
      args: ['--oauth-issuer', issuer.issuer, '--resource', TEST_RESOURCE, '--oauth-page-client', PAGE_CLIENT],
    }),
    launch(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  if (d) await removeDir(d.stateDir);
  await issuer?.close();
});

/** The storage of the page's origin and its cookies, as the page itself sees them. */
interface Storages {
  localStorage: { length: number; key(i: number): string | null; getItem(key: string): string | null };
  sessionStorage: { length: number; key(i: number): string | null; getItem(key: string): string | null };
  document: { cookie: string };
}

async function storedValues(w: Watched): Promise<{ local: string[]; session: string[]; cookie: string }> {
  return w.page.evaluate(() => {
    const g = globalThis as unknown as Storages;
    const all = (s: Storages['localStorage']) => Array.from({ length: s.length }, (_, i) => `${s.key(i)}=${s.getItem(s.key(i) ?? '')}`);
    return { local: all(g.localStorage), session: all(g.sessionStorage), cookie: g.document.cookie };
  });
}

/** The bearer tokens the page sent bermd, as they left the browser. */
function bearers(w: Watched): string[] {
  const sent: string[] = [];
  w.page.on('request', (r) => {
    const auth = r.headers().authorization;
    if (r.url().startsWith(d.url) && auth !== undefined) sent.push(auth.replace(/^Bearer /, ''));
  });
  return sent;
}

/** The page's requests to the server's token endpoint. */
function issuerTokenRequests(w: Watched): string[] {
  return w.requests.filter((u) => u === issuer.tokenEndpoint);
}

/** From the sign-in screen, through the server's login form as alice, back to the page signed in. */
async function signInThroughForm(w: Watched): Promise<void> {
  await w.page.getByRole('button', { name: `Sign in with 127.0.0.1:${issuer.port}` }).click();
  await w.page.waitForURL((url) => url.origin === issuer.origin);
  await w.page.getByLabel('User').fill('alice');
  await w.page.getByRole('button', { name: 'Sign in' }).click();
  await w.page.waitForURL((url) => url.origin === d.url);
  await w.page.locator('[data-principal]').waitFor();
}

describe('the page signed in through the authorization server', { timeout: 180_000 }, () => {
  it("signs in through the server's login form, names the principal, lists what it may, and stores the token nowhere", async () => {
    const w = await openPage(browser);
    const sent = bearers(w);
    try {
      await w.page.goto(`${d.url}/#/harness/weather`);
      await w.page.getByRole('heading', { name: 'Sign in to this bermd' }).waitFor();
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-sign-in.png'), fullPage: true });
      await signInThroughForm(w);
      expect(await w.page.locator('[data-principal]').innerText()).toBe('alice');
      // Back to the view the sign-in started from, with the authorization response gone from the URL.
      expect(new URL(w.page.url()).search).toBe('');
      expect(new URL(w.page.url()).hash).toBe('#/harness/weather');
      await w.page.getByRole('heading', { name: 'weather 1.4.0' }).waitFor();
      // berm:read and nothing else: no deploying, no calls.
      expect(await w.page.getByRole('button', { name: 'Undeploy weather…' }).getAttribute('title')).toBe(
        'Needs the scope berm:deploy, which alice does not hold',
      );
      expect(await w.page.getByRole('link', { name: /^Try / }).count()).toBe(0);
      await w.page.goto(`${d.url}/#/`);
      await w.page.locator('tr[data-harness="weather"]').waitFor();
      await w.page.locator('[data-stream="live"]').waitFor();
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-oauth-signed-in.png'), fullPage: true });

      // The token the page sends is the server's, for bermd's resource; no storage and no cookie holds it.
      expect(sent.length).toBeGreaterThan(0);
      const token = sent.at(-1)!;
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as {
        iss: string;
        aud: string;
        sub: string;
      };
      expect(claims).toMatchObject({ iss: issuer.issuer, aud: TEST_RESOURCE, sub: 'alice' });
      const stored = await storedValues(w);
      expect(stored).toEqual({ local: [], session: [], cookie: '' });
      // The browser holds the server's own sign-in cookies (a cookie names a host, not a port), none of them the token.
      for (const cookie of await w.context.cookies()) expect(cookie.value).not.toContain(token);

      // Every request went to bermd or to the server, and nothing the CSP refused.
      const origins = new Set(w.requests.map((u) => new URL(u).origin));
      expect([...origins].sort()).toEqual([d.url, issuer.origin].sort());
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('lets the page reach the server’s origin and no other', async () => {
    const csp = (await fetch(`${d.url}/`)).headers.get('content-security-policy')!;
    expect(csp.split('; ')).toContain(`connect-src 'self' ${issuer.origin}`);
    expect(csp.split('; ')).toContain("form-action 'none'");
    const w = await openPage(browser);
    try {
      await w.page.goto(`${d.url}/`);
      await w.page.getByRole('heading', { name: 'Sign in to this bermd' }).waitFor();
      // From the page: the server's metadata is reachable, another loopback origin is refused by the CSP.
      const reached = await w.page.evaluate(
        async ([allowed, other]) => {
          const tryFetch = (url: string) =>
            fetch(url).then(
              (r) => `answered ${r.status}`,
              () => 'refused',
            );
          return [await tryFetch(allowed!), await tryFetch(other!)];
        },
        [`${issuer.issuer}/.well-known/openid-configuration`, `http://127.0.0.1:${await closedPort()}/`],
      );
      expect(reached).toEqual(['answered 200', 'refused']);
      expect(w.errors.some((e) => e.includes('Content Security Policy'))).toBe(true);
    } finally {
      await w.close();
    }
  });

  it('forgets the token on a reload and signs in again, through the server’s own sign-in without its form', async () => {
    const w = await openPage(browser);
    try {
      await w.page.goto(`${d.url}/`);
      await w.page.getByRole('heading', { name: 'Sign in to this bermd' }).waitFor();
      await signInThroughForm(w);
      await w.page.reload();
      await w.page.getByRole('heading', { name: 'Sign in to this bermd' }).waitFor();
      const before = w.requests.length;
      await w.page.getByRole('button', { name: `Sign in with 127.0.0.1:${issuer.port}` }).click();
      await w.page.locator('[data-principal]').waitFor();
      expect(await w.page.locator('[data-principal]').innerText()).toBe('alice');
      // Through the server, which knew alice already and sent the browser straight back: no login form, no consent.
      const visited = w.requests
        .slice(before)
        .filter((u) => u.startsWith(issuer.origin))
        .map((u) => new URL(u).pathname);
      expect(visited).toContain('/auth');
      expect(visited.filter((p) => p.startsWith('/interaction/'))).toEqual([]);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('refuses to complete a sign-in it did not start, and one whose state is not its own', async () => {
    const w = await openPage(browser);
    try {
      // An authorization response the page never asked for (a link someone sent): nothing is exchanged.
      await w.page.goto(`${d.url}/?code=forged&state=forged#/harness/weather`);
      await w.page.getByText('the page came back from a sign-in it did not start').waitFor();
      expect(new URL(w.page.url()).search).toBe('');
      expect(await w.page.locator('[data-principal]').count()).toBe(0);
      expect(issuerTokenRequests(w)).toEqual([]);

      // A sign-in under way, answered with another state: refused before the code is exchanged.
      await w.page.getByRole('button', { name: `Sign in with 127.0.0.1:${issuer.port}` }).click();
      await w.page.waitForURL((url) => url.origin === issuer.origin);
      await w.page.goto(`${d.url}/?code=forged&state=not-the-one`);
      await w.page.locator('.note.error code', { hasText: 'sign-in-failed' }).waitFor();
      expect(await w.page.locator('[data-principal]').count()).toBe(0);
      expect(issuerTokenRequests(w)).toEqual([]);
      // The pending sign-in was used up: nothing of it is left in storage.
      expect(await storedValues(w)).toEqual({ local: [], session: [], cookie: '' });
    } finally {
      await w.close();
    }
  });

  it('signs out: the page forgets the token and offers to sign in again', async () => {
    const w = await openPage(browser);
    try {
      await w.page.goto(`${d.url}/`);
      await w.page.getByRole('heading', { name: 'Sign in to this bermd' }).waitFor();
      await signInThroughForm(w);
      await w.page.getByRole('button', { name: 'Sign out' }).click();
      await w.page.getByRole('heading', { name: 'Sign in to this bermd' }).waitFor();
      expect(await w.page.locator('[data-principal]').count()).toBe(0);
      expect(await storedValues(w)).toEqual({ local: [], session: [], cookie: '' });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });
});

describe('an access token that expires', { timeout: 240_000 }, () => {
  let short: TestIssuer;
  let e: RunningDaemon;
  beforeAll(async () => {
    const port = await closedPort();
    // A token of ten seconds (time enough to sign in and load the list on a loaded machine), which bermd,
    // told its clock and the server's agree (--oauth-clock-skew 0s), refuses once it is over.
    short = await startIssuer({
      scopes: GRANTED,
      users: ['alice'],
      publicClients: { [PAGE_CLIENT]: [`http://127.0.0.1:${port}/`] },
      loginForm: true,
      accessTokenTtl: 10,
    });
    const stateDir = await tempDir('berm-ui-oauth-expiry-');
    await seedHarness(stateDir, 'weather', await weatherImage(1));
    e = await startDaemon({
      port,
      stateDir,
      args: ['--oauth-issuer', short.issuer, '--resource', TEST_RESOURCE, '--oauth-page-client', PAGE_CLIENT, '--oauth-clock-skew', '0s'],
    });
  });
  afterAll(async () => {
    await e?.stop();
    if (e) await removeDir(e.stateDir);
    await short?.close();
  });

  it('is replaced by signing in again when bermd refuses it, back to the view that asked', async () => {
    const w = await openPage(browser);
    const sent: string[] = [];
    w.page.on('request', (r) => {
      const auth = r.headers().authorization;
      if (r.url().startsWith(e.url) && auth !== undefined) sent.push(auth.replace(/^Bearer /, ''));
    });
    try {
      await w.page.goto(`${e.url}/`);
      await w.page.getByRole('button', { name: `Sign in with 127.0.0.1:${short.port}` }).click();
      await w.page.getByLabel('User').fill('alice');
      await w.page.getByRole('button', { name: 'Sign in' }).click();
      await w.page.locator('tr[data-harness="weather"]').waitFor();
      const first = sent.at(-1)!;
      // Until bermd refuses the page's token: its lifetime.
      await until(
        'bermd to refuse the expired token',
        async () => ((await fetch(`${e.url}/whoami`, { headers: { authorization: `Bearer ${first}` } })).status === 401 ? true : undefined),
        150_000,
      );
      const before = w.requests.length;
      await w.page.getByRole('link', { name: 'weather' }).click();
      // Refused, the page signs in again (the server lets alice through without its form) and comes back to the harness.
      await w.page.getByRole('heading', { name: 'weather 1.4.0' }).waitFor();
      expect(await w.page.locator('[data-principal]').innerText()).toBe('alice');
      expect(new URL(w.page.url()).hash).toBe('#/harness/weather');
      const visited = w.requests
        .slice(before)
        .filter((u) => u.startsWith(short.origin))
        .map((u) => new URL(u).pathname);
      expect(visited).toContain('/auth');
      expect(visited.filter((p) => p.startsWith('/interaction/'))).toEqual([]);
      expect(sent.at(-1)).not.toBe(first);
      expect(await storedValues(w)).toEqual({ local: [], session: [], cookie: '' });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
