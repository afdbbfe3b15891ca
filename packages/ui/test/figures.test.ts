// The live figures on the page, against a real bermd: after calls made with the official MCP SDK client
// (answered, failed, refused for their arguments), a harness's page shows each tool's counts, error rate
// by kind and durations, with a chart of the hour labelled for assistive technology; a call made while
// the page is open shows without a reload; the list shows each harness's hour as a sparkline.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import { connect, deploy, type McpConnection } from '../../bermd/test/mcp-client.js';
import { launch, openLive, openPage, overflowsSideways, screenshotDir, tabThrough } from './browser.js';

let d: RunningDaemon;
let browser: Browser;
let c: McpConnection;

/** Each test's own harness: a tool that answers, one that fails, one never called. */
const image = () =>
  harnessImage(manifestWithTools(['lookup', 'broken', 'spare']), { tools: { broken: { kind: 'const', envelope: { error: 'no' } } } });

/** How long a figure may take to reach the page: the stream's interval (2 s) and a read, with room to spare. */
const LIVE_MS = 15_000;

beforeAll(async () => {
  [d, browser] = await Promise.all([startDaemon(), launch()]);
  c = await connect(d.url);
});

afterAll(async () => {
  await c?.close().catch(() => {});
  await browser?.close();
  await d?.stop();
  if (d) await removeDir(d.stateDir);
});

const call = (name: string, args: Record<string, unknown>) => c.client.callTool({ name, arguments: args });

/** The text of one figure of `tool` in `window` (`last_minute`, `since_start`). */
const figure = (page: Page, tool: string, window: string, name: string) =>
  page.locator(`[data-figures-tool="${tool}"] [data-window="${window}"] [data-figure="${name}"]`);

describe('live figures on the page', { timeout: 120_000 }, () => {
  it('shows each tool’s calls, error rate by kind and durations, and a call made while it is open', async () => {
    await deploy(d.url, 'stats', await image());
    for (let i = 0; i < 4; i++) await call('stats.lookup', { query: `q${i}` });
    for (let i = 0; i < 3; i++) await call('stats.broken', { query: 'x' });
    await call('stats.lookup', { query: 7 });

    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/harness/stats');
      await w.page.locator('[data-figures]').waitFor();
      for (const window of ['last_minute', 'since_start']) {
        expect(await figure(w.page, 'lookup', window, 'calls').innerText()).toBe('5');
        expect(await figure(w.page, 'lookup', window, 'error_rate').innerText()).toBe('20 % (refused 1)');
        expect(await figure(w.page, 'broken', window, 'calls').innerText()).toBe('3');
        expect(await figure(w.page, 'broken', window, 'error_rate').innerText()).toBe('100 % (tool error 3)');
        expect(await figure(w.page, 'spare', window, 'calls').innerText()).toBe('0');
        expect(await figure(w.page, 'spare', window, 'p50').innerText()).toBe('–');
      }
      // Durations as text, in milliseconds or seconds, with the estimate's error on hover.
      expect(await figure(w.page, 'lookup', 'last_minute', 'p50').innerText()).toMatch(/^\d+(\.\d+)? m?s$/);
      expect(await figure(w.page, 'lookup', 'last_minute', 'p99').getAttribute('title')).toMatch(/within \d+(\.\d+)? % of a duration/);
      // The hour's chart says what it shows.
      const chart = w.page.locator('[data-figures-tool="lookup"] svg[role="img"]');
      expect(await chart.getAttribute('aria-label')).toBe('Calls per minute over the last hour: 5 calls, 1 failed, at most 5 in a minute');
      expect(await w.page.locator('[data-figures-tool="spare"] svg[role="img"]').getAttribute('aria-label')).toBe(
        'Calls per minute over the last hour: none',
      );
      const requestsBefore = w.requests.filter((u) => u.endsWith('/')).length;

      // A call made elsewhere while the page is open: the page shows it without a reload.
      await call('stats.broken', { query: 'y' });
      await figure(w.page, 'broken', 'since_start', 'calls').filter({ hasText: /^4$/ }).waitFor({ timeout: LIVE_MS });
      expect(await figure(w.page, 'broken', 'last_minute', 'error_rate').innerText()).toBe('100 % (tool error 4)');
      expect(w.requests.filter((u) => u.endsWith('/')).length).toBe(requestsBefore);

      expect(await tabThrough(w.page)).toEqual({ unreached: [], unnamed: [] });
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'figures.png'), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('shows each harness’s hour as a sparkline in the list, kept current, and fits 400 px', async () => {
    await deploy(d.url, 'listed', await image());
    await deploy(d.url, 'quiet', await image());
    await call('listed.lookup', { query: 'a' });
    await call('listed.broken', { query: 'b' });
    const w = await openPage(browser, { width: 400 });
    try {
      await openLive(w, d.url);
      const cell = (name: string) => w.page.locator(`tr[data-harness="${name}"] [data-sparkline]`);
      const calls = (name: string, text: RegExp) =>
        cell(name).locator('[data-figure="hour-calls"]').filter({ hasText: text }).waitFor({ timeout: LIVE_MS });
      await calls('listed', /^2 calls, 1 failed$/);
      expect(await cell('listed').locator('svg[role="img"]').getAttribute('aria-label')).toBe(
        'Calls per minute over the last hour: 2 calls, 1 failed, at most 2 in a minute',
      );
      await calls('quiet', /^0 calls$/);
      expect(await cell('quiet').locator('svg[role="img"]').getAttribute('aria-label')).toBe('Calls per minute over the last hour: none');
      // A call made while the list is open shows without a reload.
      await call('quiet.lookup', { query: 'z' });
      await calls('quiet', /^1 call$/);
      expect(await overflowsSideways(w.page)).toBe(false);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'figures-list-400.png'), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
