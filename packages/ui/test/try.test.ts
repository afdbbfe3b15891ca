// Trying tools from the page, through /mcp as an MCP client would: a form drawn from the schema
// and checked before sending; a result, a Failed and a Refused answer told apart; the events a
// call emitted; and all of it with a token when bermd asks for one.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { deploy, undeploy } from '../../bermd/test/mcp-client.js';
import { relayImage } from '../../../test/helpers/guest.js';
import { launch, openLive, openPage, overflowsSideways, screenshotDir, tabThrough, type Watched } from './browser.js';
import { OUTLOOK_ERROR, weatherImage } from './fixtures.js';

let d: RunningDaemon;
let browser: Browser;

beforeAll(async () => {
  [d, browser] = await Promise.all([startDaemon(), launch()]);
  await deploy(d.url, 'weather', await weatherImage());
  await deploy(d.url, 'relay', (await relayImage()).bytes);
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  if (d) await removeDir(d.stateDir);
});

/** The answer shown once a call returns. */
async function outcome(page: Page): Promise<{ kind: string; heading: string; body: string; events: string }> {
  const section = page.locator('[data-outcome]');
  await section.waitFor();
  return {
    kind: (await section.getAttribute('data-outcome'))!,
    heading: await section.locator('h2').innerText(),
    body: await section.locator('pre').first().innerText(),
    events: await section.locator('h3 ~ *').first().innerText(),
  };
}

const mcpPosts = (w: Watched) => w.requests.filter((u) => u.endsWith('/mcp')).length;

async function fillForecast(page: Page, days: string): Promise<void> {
  await page.getByLabel('city (required)').fill('Lyon');
  await page.getByLabel('days (required)').fill(days);
  await page.getByLabel('units', { exact: true }).selectOption('imperial');
  await page.getByLabel('hourly', { exact: true }).selectOption('true');
  await page.getByRole('button', { name: 'Add an item to stations' }).click();
  await page.getByRole('button', { name: 'Add an item to stations' }).click();
  await page.getByRole('textbox', { name: 'stations[0] (required)' }).fill('LYS');
  await page.getByRole('textbox', { name: 'stations[1] (required)' }).fill('LYN');
  await page.getByRole('button', { name: 'Remove stations[0]' }).click();
  await page.getByLabel('lat (required)').fill('45.76');
  await page.getByLabel('lon (required)').fill('4.84');
  await page.getByLabel('tags', { exact: true }).fill('["rain", "wind"]');
}

describe('trying a tool', { timeout: 120_000 }, () => {
  it('fills a form drawn from the schema, checks it before sending, and shows the result', async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/harness/weather/try/forecast');
      await fillForecast(w.page, '30');
      await w.page.getByRole('button', { name: 'Call forecast' }).click();
      // Out of range: said where, and nothing was sent.
      const problems = w.page.getByRole('alert', { name: 'Problems with the arguments' });
      await problems.waitFor();
      expect(await problems.innerText()).toMatch(/\/days.*14/);
      expect(mcpPosts(w)).toBe(0);

      await w.page.getByLabel('days (required)').fill('3');
      await w.page.getByRole('button', { name: 'Call forecast' }).click();
      const shown = await outcome(w.page);
      expect(shown.kind).toBe('result');
      expect(shown.heading).toBe('Result');
      // forecast answers its arguments: exactly what the form built.
      expect(JSON.parse(shown.body)).toEqual({
        city: 'Lyon',
        days: 3,
        units: 'imperial',
        hourly: true,
        stations: ['LYN'],
        near: { lat: 45.76, lon: 4.84 },
        tags: ['rain', 'wind'],
      });
      expect(shown.events).toBe('none');
      expect(await problems.count()).toBe(0);

      const { unreached, unnamed } = await tabThrough(w.page);
      expect([unreached, unnamed]).toEqual([[], []]);
      expect(w.errors).toEqual([]);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-try.png'), fullPage: true });
      // The call was recorded as a use, as any MCP client's would be.
      const detail = (await (await fetch(`${d.url}/harnesses/weather`)).json()) as { usage: { tools: Record<string, string | null> } };
      expect(detail.usage.tools.forecast).not.toBeNull();
    } finally {
      await w.close();
    }
  });

  it('shows a tool that ran and failed as Failed, with its code and message', async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/harness/weather/try/outlook');
      await w.page.getByLabel('city (required)').fill('Nowhere');
      await w.page.getByRole('button', { name: 'Call outlook' }).click();
      const shown = await outcome(w.page);
      expect([shown.kind, ...shown.heading.split(/\s+/)]).toEqual(['failed', 'Failed', 'guest-error']);
      expect(shown.body).toContain(OUTLOOK_ERROR);
      expect(await w.page.locator('[data-outcome] p').first().innerText()).toBe('The tool ran and failed.');
    } finally {
      await w.close();
    }
  });

  it("shows bermd's refusal of arguments the page was told not to check as Refused, with where", async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/harness/weather/try/forecast');
      await w.page.getByLabel('JSON').check();
      await w.page.getByLabel('Arguments (JSON)', { exact: false }).fill('{"city": "Lyon", "days": 99}');
      await w.page.getByLabel('Check the arguments against the schema here', { exact: false }).uncheck();
      await w.page.getByRole('button', { name: 'Call forecast' }).click();
      const shown = await outcome(w.page);
      expect(shown.kind).toBe('refused');
      expect(shown.heading).toContain('invalid-arguments');
      expect(await w.page.locator('[data-outcome] p').first().innerText()).toBe(
        'Nothing ran: bermd refused the call. At /days of the arguments.',
      );
    } finally {
      await w.close();
    }
  });

  it('keeps the form of a harness undeployed elsewhere, says so, and shows the call refused', async () => {
    await deploy(d.url, 'brief', await weatherImage());
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/harness/brief/try/outlook');
      await w.page.getByLabel('city (required)').fill('Lyon');
      await undeploy(d.url, 'brief');
      await w.page.getByText('is no longer deployed', { exact: false }).waitFor();
      await w.page.getByRole('button', { name: 'Call outlook' }).click();
      const shown = await outcome(w.page);
      expect(shown.kind).toBe('refused');
      expect(shown.heading).toContain('-32602');
      expect(shown.body).toContain('brief.outlook');
    } finally {
      await w.close();
    }
  });

  it('shows the events a call emitted', async () => {
    const w = await openPage(browser, { width: 400, height: 900, colorScheme: 'dark' });
    try {
      await openLive(w, d.url, '#/harness/relay/try/emit');
      // `emit` takes any object: the form is a JSON box.
      await w.page.getByRole('textbox', { name: 'arguments (required)' }).fill('{"event": "reading", "fields": {"celsius": 21.5}}');
      await w.page.getByRole('button', { name: 'Call emit' }).click();
      const shown = await outcome(w.page);
      expect(shown.kind).toBe('result');
      const events = w.page.locator('ul.events li');
      expect(await events.count()).toBe(1);
      expect(await events.locator('code').innerText()).toBe('reading');
      expect(await events.locator('.muted').innerText()).toBe('from emit');
      expect(JSON.parse(await events.locator('pre').innerText())).toEqual({ celsius: 21.5 });
      expect(await overflowsSideways(w.page)).toBe(false);
      expect(w.errors).toEqual([]);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-try-400-dark.png'), fullPage: true });
    } finally {
      await w.close();
    }
  });
});

describe('with --token-file', { timeout: 120_000 }, () => {
  it('asks for the token, refuses a wrong one, and sends the right one as a header, never a cookie', async () => {
    const dir = await tempDir('berm-ui-token-');
    await writeFile(path.join(dir, 'token'), 'the-token\n');
    const daemon = await startDaemon({ args: ['--token-file', path.join(dir, 'token')] });
    const w = await openPage(browser);
    try {
      await deploy(daemon.url, 'weather', await weatherImage(), { authorization: 'Bearer the-token' });
      await w.page.goto(`${daemon.url}/`);
      await w.page.getByRole('heading', { name: 'This bermd asks for a token' }).waitFor();
      await w.page.getByLabel('Token', { exact: true }).fill('not-it');
      await w.page.getByRole('button', { name: 'Use this token' }).click();
      await w.page.getByText('bermd did not accept that token.').waitFor();
      await w.page.getByLabel('Token', { exact: true }).fill('the-token');
      await w.page.getByRole('button', { name: 'Use this token' }).click();
      await w.page.locator('tr[data-harness="weather"]').waitFor();
      await w.page.locator('[data-stream="live"]').waitFor();

      await w.page.goto(`${daemon.url}/#/harness/weather/try/forecast`);
      await w.page.getByLabel('city (required)').fill('Lyon');
      await w.page.getByLabel('days (required)').fill('2');
      const sent: string[] = [];
      w.page.on('request', (r) => {
        if (r.url().endsWith('/mcp')) sent.push(r.headers().authorization ?? '');
      });
      await w.page.getByRole('button', { name: 'Call forecast' }).click();
      expect((await outcome(w.page)).kind).toBe('result');
      expect(sent.length).toBeGreaterThan(0);
      expect(new Set(sent)).toEqual(new Set(['Bearer the-token']));
      expect(await w.page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).toBe('');
      expect((await w.context.cookies()).length).toBe(0);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
      await daemon.stop();
      await removeDir(daemon.stateDir);
      await removeDir(dir);
    }
  });
});
