// The page signed in as static principals (`--access`), in a real browser against a real bermd: it says
// who is signed in and signs out; it offers only what the principal may do. A reader sees the list
// with deploying and undeploying greyed, naming berm:deploy, and no tool offered for calls; a
// principal that may call `weather` alone, without berm:read, sees no list but weather's tools, and
// calls one; a deployer without berm:force sees the refused break with the force greyed.
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAccess } from '../../bermd/test/access.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { deploy } from '../../bermd/test/mcp-client.js';
import { seedHarness } from '../../bermd/test/seed.js';
import { Scratch } from '../../cli/test/helpers/cli.js';
import { relayImage } from '../../../test/helpers/guest.js';
import { launch, openPage, screenshotDir, tabThrough, type Watched } from './browser.js';
import { weatherImage } from './fixtures.js';

const HOUR = 3600 * 1000;

const PRINCIPALS = {
  admin: ['berm:read', 'berm:deploy', 'berm:force', 'berm:call'],
  reader: ['berm:read'],
  caller: ['berm:call:weather'],
  deployer: ['berm:read', 'berm:deploy'],
} as const;
type Name = keyof typeof PRINCIPALS;

let d: RunningDaemon;
let browser: Browser;
let scratch: Scratch;
let dir: string;
let tokens: Record<Name, string>;
const files: Record<string, string> = {};

beforeAll(async () => {
  dir = await tempDir('berm-ui-principals-');
  const access = await writeAccess(
    dir,
    (Object.keys(PRINCIPALS) as Name[]).map((name) => ({ name, scopes: [...PRINCIPALS[name]] })),
  );
  tokens = access.tokens as Record<Name, string>;
  // `forecast` was called two hours ago, so version 2 (which breaks it) is refused without force.
  const stateDir = await tempDir('berm-ui-principals-state-');
  await seedHarness(stateDir, 'weather', await weatherImage(1), { tools: { forecast: Date.now() - 2 * HOUR } });
  [d, browser, scratch] = await Promise.all([startDaemon({ stateDir, args: ['--access', access.file] }), launch(), Scratch.create()]);
  await deploy(d.url, 'relay', (await relayImage()).bytes, { authorization: `Bearer ${tokens.admin}` });
  files.v2 = await scratch.write('weather-2.wasm', await weatherImage(2));
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  if (d) await removeDir(d.stateDir);
  if (dir) await removeDir(dir);
  await scratch?.remove();
});

/** Opens the page at `hash` and signs in with `name`'s token, as a person would; resolves once the header names it. */
async function signIn(w: Watched, name: Name, hash = '#/'): Promise<void> {
  await w.page.goto(`${d.url}/${hash}`);
  await w.page.getByRole('heading', { name: 'This bermd asks for a token' }).waitFor();
  await w.page.getByLabel('Token', { exact: true }).fill(tokens[name]);
  await w.page.getByRole('button', { name: 'Use this token' }).click();
  expect(await w.page.locator('[data-principal]').innerText()).toBe(name);
}

async function harness(name: string): Promise<{ status: number; version?: string }> {
  const res = await fetch(`${d.url}/harnesses/${name}`, { headers: { authorization: `Bearer ${tokens.admin}` } });
  return res.ok ? { status: res.status, ...((await res.json()) as { version: string }) } : { status: res.status };
}

/** The page's storage, as the scripts below read it (the tests' typecheck is Node's, without the DOM's types). */
interface Storages {
  sessionStorage: { getItem(key: string): string | null };
}

const sessionToken = (w: Watched) => w.page.evaluate(() => (globalThis as unknown as Storages).sessionStorage.getItem('bermd-token'));

describe('the page signed in as a static principal', { timeout: 120_000 }, () => {
  it('says who is signed in, and signs out: the token is forgotten and asked for again', async () => {
    const w = await openPage(browser);
    try {
      await signIn(w, 'admin');
      await w.page.locator('tr[data-harness="weather"]').waitFor();
      expect(await sessionToken(w)).toBe(tokens.admin);
      await w.page.getByRole('button', { name: 'Sign out' }).click();
      await w.page.getByRole('heading', { name: 'This bermd asks for a token' }).waitFor();
      expect(await sessionToken(w)).toBeNull();
      expect(await w.page.locator('[data-principal]').count()).toBe(0);
      // Signed out for good: a reload asks again.
      await w.page.reload();
      await w.page.getByRole('heading', { name: 'This bermd asks for a token' }).waitFor();
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('shows a reader the list, with deploying and undeploying greyed naming berm:deploy, and no tool offered for calls', async () => {
    const w = await openPage(browser);
    try {
      await signIn(w, 'reader');
      await w.page.locator('[data-stream="live"]').waitFor();
      await w.page.locator('tr[data-harness="weather"]').waitFor();
      await w.page.locator('tr[data-harness="relay"]').waitFor();
      const needsDeploy = 'Needs the scope berm:deploy, which reader does not hold';

      await w.page.goto(`${d.url}/#/harness/weather`);
      await w.page.getByRole('heading', { name: 'weather 1.4.0' }).waitFor();
      const undeploy = w.page.getByRole('button', { name: 'Undeploy weather…' });
      expect(await undeploy.isDisabled()).toBe(true);
      expect(await undeploy.getAttribute('title')).toBe(needsDeploy);
      const redeploy = w.page.getByRole('button', { name: 'Deploy a new image as weather' });
      expect(await redeploy.isDisabled()).toBe(true);
      expect(await redeploy.getAttribute('title')).toBe(needsDeploy);
      expect(await w.page.getByRole('article', { name: 'tool forecast' }).isVisible()).toBe(true);
      expect(await w.page.getByRole('link', { name: /^Try / }).count()).toBe(0);
      expect(await w.page.locator('[data-cannot-call]').innerText()).toContain('berm:call:weather');
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-reader-harness.png'), fullPage: true });

      await w.page.goto(`${d.url}/#/deploy`);
      expect(await w.page.locator('[data-cannot-deploy]').innerText()).toContain(needsDeploy);
      const check = w.page.getByRole('button', { name: 'Check (dry run)' });
      expect(await check.isDisabled()).toBe(true);
      expect(await check.getAttribute('title')).toBe(needsDeploy);
      expect(await w.page.getByLabel('Image file (.wasm)', { exact: false }).isDisabled()).toBe(true);
      // A disabled control is out of the Tab order; every other one is reached and named.
      expect(await tabThrough(w.page)).toEqual({ unreached: [], unnamed: [] });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("shows a principal that may call weather alone no list, but weather's tools, and calls one", async () => {
    const w = await openPage(browser);
    try {
      await signIn(w, 'caller');
      await w.page.locator('[data-unreadable]').waitFor();
      expect(await w.page.locator('[data-unreadable]').innerText()).toContain('berm:read');
      await w.page.locator('[data-callable="weather"]').waitFor();
      expect(await w.page.locator('[data-callable]').count()).toBe(1);
      expect(await w.page.locator('[data-callable="weather"]').getByRole('link').allInnerTexts()).toEqual(['Try forecast', 'Try outlook']);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-caller-list.png'), fullPage: true });

      await w.page.getByRole('link', { name: 'Try forecast' }).click();
      await w.page.getByLabel('city (required)').fill('Lyon');
      await w.page.getByLabel('days (required)').fill('2');
      await w.page.getByRole('button', { name: 'Call forecast' }).click();
      const outcome = w.page.locator('[data-outcome]');
      await outcome.waitFor();
      expect(await outcome.getAttribute('data-outcome')).toBe('result');
      expect(JSON.parse(await outcome.locator('pre').first().innerText())).toMatchObject({ city: 'Lyon', days: 2 });

      await w.page.goto(`${d.url}/#/harness/relay/try/emit`);
      expect(await w.page.locator('[data-cannot-call]').innerText()).toContain('berm:call:relay');
      // Nothing it may not read was asked for: no list, no change stream, no harness.
      const asked = w.requests.map((u) => new URL(u).pathname).filter((p) => p.startsWith('/harnesses') || p === '/events');
      expect(asked).toEqual([]);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('shows a deployer without berm:force the break that refuses its deploy, with the force greyed', async () => {
    const before = await harness('weather');
    const w = await openPage(browser);
    try {
      await signIn(w, 'deployer', '#/deploy/weather');
      await w.page.getByLabel('Image file (.wasm)', { exact: false }).setInputFiles(files.v2!);
      await w.page.locator('.verdict.gate').waitFor();
      const force = w.page.getByRole('button', { name: 'Force the deploy…' });
      expect(await force.isDisabled()).toBe(true);
      expect(await force.getAttribute('title')).toBe('Needs the scope berm:force, which deployer does not hold');
      expect(await harness('weather')).toEqual(before);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
