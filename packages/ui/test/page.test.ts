// The list and a harness page in a real browser against a real bermd: the list fills and follows
// deploys made by the CLI without a reload; a harness page renders its usage as Markdown and lists
// what it declares; hostile manifest text renders as text and runs nothing; the page reads at
// 400 px and in the dark, every control reached by Tab and labelled.
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import { Scratch, runCli } from '../../cli/test/helpers/cli.js';
import { harnessImage } from '../../../test/helpers/harness.js';
import { launch, openLive, openPage, overflowsSideways, screenshotDir, tabThrough } from './browser.js';
import { HOSTILE_IMG, HOSTILE_SCRIPT, hostileManifest, PWNED, weatherImage } from './fixtures.js';

let d: RunningDaemon;
let browser: Browser;
let scratch: Scratch;
const files: Record<string, string> = {};

beforeAll(async () => {
  [d, browser, scratch] = await Promise.all([startDaemon({ args: ['--max-concurrency', '2'] }), launch(), Scratch.create()]);
  files.weather = await scratch.write('weather.wasm', await weatherImage());
  files.hostile = await scratch.write('hostile.wasm', await harnessImage(hostileManifest()));
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  if (d) await removeDir(d.stateDir);
  await scratch?.remove();
});

const crab = (...args: string[]) => runCli(args, { env: { BERM_URL: d.url, BERM_TOKEN: undefined } });

describe('the page in a browser', { timeout: 120_000 }, () => {
  it('lists the harnesses, and follows deploys and undeploys made by the CLI without a reload', async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url);
      await w.page.getByText('Nothing is deployed.').waitFor();
      // Set once; a reload would lose it.
      await w.page.evaluate(() => ((globalThis as Record<string, unknown>).__sameDocument = true));

      expect((await crab('deploy', 'weather', files.weather!)).code).toBe(0);
      const row = w.page.locator('tr[data-harness="weather"]');
      await row.waitFor();
      // The hour's figures come from GET /figures, read again once the deploy is announced.
      await row
        .locator('[data-figure="hour-calls"]')
        .filter({ hasText: /^0 calls$/ })
        .waitFor();
      const cells = await row.locator('th, td').allInnerTexts();
      expect(cells.slice(0, 3)).toEqual(['weather', '1.4.0', 'forecast, outlook']);
      expect(cells[3]).toMatch(/^[0-9a-f]{12}$/);
      expect(cells.slice(5)).toEqual(['anonymous', 'never', '0 calls', '10s/64M/1M/2', '-']);

      expect((await crab('deploy', 'second', files.weather!)).code).toBe(0);
      await w.page.locator('tr[data-harness="second"]').waitFor();
      expect((await crab('undeploy', 'second')).code).toBe(0);
      await w.page.locator('tr[data-harness="second"]').waitFor({ state: 'detached' });
      expect(await w.page.evaluate(() => (globalThis as Record<string, unknown>).__sameDocument)).toBe(true);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("renders a harness's usage as Markdown and lists its tools, events and deps", async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/harness/weather');
      const usage = w.page.locator('section[aria-labelledby="usage-heading"] .markdown');
      await usage.waitFor();
      expect(await usage.locator('h2').innerText()).toBe('Choosing a tool');
      expect(await usage.locator('li strong').allInnerTexts()).toEqual(['forecast', 'outlook']);
      expect(await usage.locator('code').allInnerTexts()).toEqual(['days', 'imperial']);
      const link = usage.getByRole('link', { name: 'the service' });
      expect(await link.getAttribute('href')).toBe('https://weather.example.com/docs');
      expect(await link.getAttribute('rel')).toBe('noopener noreferrer');

      const forecast = w.page.getByRole('article', { name: 'tool forecast' });
      expect(await forecast.locator('.signature').innerText()).toBe(
        'forecast(city: string, days: integer ≥1 ≤14, units?: "metric"|"imperial", hourly?: boolean, stations?: string[], near?: Point{lat: number ≥-90 ≤90, lon: number ≥-180 ≤180}, tags?: string | string[])',
      );
      expect(await forecast.locator('.mark').allInnerTexts()).toEqual(['query']);
      expect(await w.page.getByRole('article', { name: 'tool outlook' }).locator('.mark').allInnerTexts()).toEqual(['deprecated']);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-harness.png'), fullPage: true });
      // The full schema is one click away.
      const schema = forecast.locator('details pre');
      expect(await schema.isVisible()).toBe(false);
      await forecast.getByText('Schema of forecast').click();
      expect(JSON.parse(await schema.innerText()).arguments.required).toEqual(['city', 'days']);

      expect(await w.page.getByRole('article', { name: 'event alert' }).locator('.signature').innerText()).toBe('alert{level: string}');
      const deps = w.page.locator('section[aria-labelledby="deps-heading"]');
      expect(await deps.locator('li').innerText()).toBe('geocoder not deployed');
      expect(await w.page.locator('.markdown h1').innerText()).toBe('weather');
      // Deployed through a bermd that asks for no token: by anonymous.
      expect(await w.page.locator('dd.deployed-by').innerText()).toBe('anonymous');
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('renders HTML, script and javascript: links from a manifest as text, and runs and loads nothing', async () => {
    expect((await crab('deploy', 'hostile', files.hostile!)).code).toBe(0);
    for (const hash of ['#/', '#/harness/hostile', '#/harness/hostile/try/echo']) {
      const w = await openPage(browser);
      try {
        await openLive(w, d.url, hash);
        await w.page.locator('main h1').first().waitFor();
        if (hash !== '#/') await w.page.getByText(HOSTILE_IMG).first().waitFor();
        expect(await w.page.evaluate((flag) => (globalThis as Record<string, unknown>)[flag], PWNED)).toBeUndefined();
        // Nothing the manifest wrote became an element: no images, scripts, frames or javascript: links.
        expect(await w.page.locator('main img, main script, main iframe, a[href^="javascript:" i]').count()).toBe(0);
        expect(w.dialogs).toEqual([]);
        expect(w.errors).toEqual([]);
        expect(w.requests.filter((u) => !u.startsWith(`${d.url}/`))).toEqual([]);
        if (hash === '#/harness/hostile') {
          const text = await w.page.locator('main').innerText();
          for (const shown of [
            HOSTILE_IMG,
            HOSTILE_SCRIPT,
            `Looks harmless ${HOSTILE_IMG}`,
            `[click me](javascript:window.${PWNED}='link')`,
            `javascript:window.${PWNED}='homepage'`,
          ]) {
            expect(text).toContain(shown);
          }
          // A remote image becomes a link to it, never a load.
          expect(await w.page.getByRole('link', { name: 'image: tracker' }).getAttribute('href')).toBe('http://192.0.2.1/pixel.png');
          // Clicking what looks like a link runs nothing either.
          await w.page.getByText('[click me]', { exact: false }).first().click();
          expect(await w.page.evaluate((flag) => (globalThis as Record<string, unknown>)[flag], PWNED)).toBeUndefined();
        }
        if (hash.includes('/try/')) {
          // Property names and enum values label the form as text.
          await w.page.getByLabel(HOSTILE_IMG).fill('x');
          expect(await w.page.locator('select option').allInnerTexts()).toContain(HOSTILE_IMG);
        }
      } finally {
        await w.close();
      }
    }
    expect((await crab('undeploy', 'hostile')).code).toBe(0);
  });

  it('reads at 400 px wide and in a dark colour scheme, and every control is reached by Tab and labelled', async () => {
    const shots = await screenshotDir();
    for (const colorScheme of ['light', 'dark'] as const) {
      const w = await openPage(browser, { width: 400, height: 860, colorScheme });
      try {
        for (const [hash, ready, name] of [
          ['#/', 'tr[data-harness="weather"]', 'list'],
          ['#/harness/weather', 'section[aria-labelledby="usage-heading"]', 'harness'],
          ['#/deploy', '#image', 'deploy'],
        ] as const) {
          await openLive(w, d.url, hash);
          await w.page.locator(ready).waitFor();
          expect([hash, await overflowsSideways(w.page)]).toEqual([hash, false]);
          const background = await w.page.evaluate(() => {
            const g = globalThis as unknown as { getComputedStyle(el: unknown): { backgroundColor: string }; document: { body: unknown } };
            return g.getComputedStyle(g.document.body).backgroundColor;
          });
          const [r, g, b] = background.match(/\d+/g)!.map(Number);
          expect([hash, colorScheme, r! + g! + b! < 150]).toEqual([hash, colorScheme, colorScheme === 'dark']);
          const { unreached, unnamed } = await tabThrough(w.page);
          expect([hash, unreached, unnamed]).toEqual([hash, [], []]);
          await w.page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
          if (name !== 'deploy')
            await w.page.screenshot({ path: path.join(shots, `ui-${name}-400-${colorScheme}.png`), fullPage: name === 'list' });
        }
        expect(w.errors).toEqual([]);
      } finally {
        await w.close();
      }
    }
    const wide = await openPage(browser, { colorScheme: 'dark' });
    try {
      await openLive(wide, d.url);
      await wide.page.locator('tr[data-harness="weather"]').waitFor();
      await wide.page.screenshot({ path: path.join(shots, 'ui-list-dark.png') });
      await wide.page.emulateMedia({ colorScheme: 'light' });
      await wide.page.screenshot({ path: path.join(shots, 'ui-list.png') });
    } finally {
      await wide.close();
    }
  });
});
