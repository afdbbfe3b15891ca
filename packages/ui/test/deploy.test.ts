// Deploying and undeploying from the page, against a real bermd whose `weather` has a caller that
// used `forecast` two hours ago: a first deploy by file upload after a dry run; limits and grants
// typed in the form, one refused by the dry run, then deployed as bindings; a new version
// whose dry run shows the refused break with its last use, then forced past a confirmation that
// names it; a refused image; an undeploy, cancelled and then confirmed.
import { HARNESS_SETTINGS } from '@berm/protocol';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { seedHarness } from '../../bermd/test/seed.js';
import { Scratch } from '../../cli/test/helpers/cli.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { launch, openLive, openPage, tabThrough, type PageDocument } from './browser.js';
import { weatherImage } from './fixtures.js';

const HOUR = 3600 * 1000;

let d: RunningDaemon;
let browser: Browser;
let scratch: Scratch;
const files: Record<string, string> = {};

beforeAll(async () => {
  const stateDir = await tempDir('berm-ui-deploy-');
  await seedHarness(stateDir, 'weather', await weatherImage(1), { tools: { forecast: Date.now() - 2 * HOUR } });
  [d, browser, scratch] = await Promise.all([startDaemon({ stateDir }), launch(), Scratch.create()]);
  files.v1 = await scratch.write('weather.wasm', await weatherImage(1));
  files.v2 = await scratch.write('weather-2.wasm', await weatherImage(2));
  files.broken = await scratch.write('broken.wasm', await harnessImage(manifestWithTools(['a', 'b']), { omit: ['berm_tool_b'] }));
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  if (d) await removeDir(d.stateDir);
  await scratch?.remove();
});

async function harness(name: string): Promise<{ status: number; version?: string; digest?: string }> {
  const res = await fetch(`${d.url}/harnesses/${name}`);
  return res.ok ? { status: res.status, ...((await res.json()) as { version: string; digest: string }) } : { status: res.status };
}

describe('deploying from the page', { timeout: 120_000 }, () => {
  it('deploys an uploaded image after a dry run that says what it declares and what the deploy would do', async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/deploy');
      await w.page.getByLabel('Image file (.wasm)', { exact: false }).setInputFiles(files.v1!);
      // The name comes from the file; the dry run starts by itself.
      expect(await w.page.getByLabel('Harness name').inputValue()).toBe('weather');
      await w.page.getByLabel('Harness name').fill('forecasts');
      await w.page.getByRole('button', { name: 'Check (dry run)' }).click();
      const verdict = w.page.locator('.verdict');
      await verdict.getByText('A deploy would create forecasts with version 1.4.0').waitFor();
      expect(await verdict.locator('.notices').innerText()).toContain('program geocoder is declared in deps.programs but not deployed');
      expect(await w.page.getByRole('article', { name: 'tool forecast' }).locator('.signature').innerText()).toMatch(
        /^forecast\(city: string, days: integer ≥1 ≤14/,
      );
      // A dry run stores nothing.
      expect((await harness('forecasts')).status).toBe(404);

      const { unreached, unnamed } = await tabThrough(w.page);
      expect([unreached, unnamed]).toEqual([[], []]);

      await w.page.getByRole('button', { name: 'Deploy forecasts' }).click();
      await w.page.getByRole('heading', { name: 'forecasts 1.4.0' }).waitFor();
      expect(await harness('forecasts')).toMatchObject({ status: 200, version: '1.4.0' });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('has a field for every per-harness setting, sent under its wire name', async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/deploy');
      await w.page.getByLabel('Image file (.wasm)', { exact: false }).setInputFiles(files.v1!);
      await w.page.getByLabel('Harness name').fill('walked');
      await w.page.getByText('Limits and grants').click();
      for (const row of HARNESS_SETTINGS) {
        const field = w.page.getByLabel(row.harness.title, { exact: true });
        expect(await field.getAttribute('id')).toBe(`limit-${row.harness.wire}`);
        expect(await field.getAttribute('placeholder')).toBe(row.harness.example);
        // A value the row refuses comes back refused under the row's wire name: the form sent it there.
        const refused = w.page.locator('.verdict.refused');
        await field.fill('x1');
        // Typing clears the previous field's verdict: the one awaited is this field's.
        await refused.waitFor({ state: 'detached' });
        await w.page.getByRole('button', { name: 'Check (dry run)' }).click();
        await refused.waitFor();
        expect(await refused.innerText()).toContain(`bad-limit ${row.harness.wire} x1: `);
        await field.fill('');
      }
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('sends the limits and grants typed in the form as the deploy query crab deploy sends, and shows a bad one refused', async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/deploy');
      await w.page.getByLabel('Image file (.wasm)', { exact: false }).setInputFiles(files.v1!);
      await w.page.getByLabel('Harness name').fill('bound');
      await w.page.getByText('Limits and grants').click();
      await w.page.getByLabel('Call time limit').fill('soon');
      await w.page.getByRole('button', { name: 'Check (dry run)' }).click();
      const refused = w.page.locator('.verdict.refused');
      await refused.waitFor();
      expect(await refused.innerText()).toContain('bad-limit timeout soon: expected a duration such as 500ms, 10s or 2m');

      await w.page.getByLabel('Call time limit').fill('2s');
      await w.page.getByLabel('Memory cap').fill('16M');
      await w.page.getByLabel('Calls at once').fill('1');
      await w.page.getByLabel('Grants, one per line').fill('none');
      await w.page.getByRole('button', { name: 'Check (dry run)' }).click();
      await w.page.locator('.verdict.ok').waitFor();
      await w.page.getByRole('button', { name: 'Deploy bound' }).click();
      await w.page.getByRole('heading', { name: 'bound 1.4.0' }).waitFor();
      const held = (await (await fetch(`${d.url}/harnesses/bound`)).json()) as { bindings: unknown };
      expect(held.bindings).toEqual({
        timeout: 2000,
        max_memory: 16 * 1024 * 1024,
        max_concurrency: 1,
        grants: { syscalls: {}, secrets: [] },
      });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('shows the break a caller would suffer, with its last use, and forces the deploy only once confirmed', async () => {
    const before = await harness('weather');
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/deploy/weather');
      await w.page.getByLabel('Image file (.wasm)', { exact: false }).setInputFiles(files.v2!);
      const verdict = w.page.locator('.verdict.gate');
      await verdict.waitFor();
      expect(await verdict.locator('h2').innerText()).toBe('A deploy would be refused: it breaks what callers used in the last 30 days');
      const refusing = await verdict.locator('ul.breaks').first().innerText();
      expect(refusing).toContain('tool forecast');
      expect(refusing).toContain('argument-newly-required');
      expect(refusing).toContain('/arguments/properties/units');
      expect(refusing).toContain('last used 2 hours ago');
      // What the new image declares comes from a forced dry run; nothing was stored by either.
      expect(await w.page.locator('.declares').getByRole('article', { name: 'tool forecast' }).isVisible()).toBe(true);
      expect(await harness('weather')).toEqual(before);

      await w.page.getByRole('button', { name: 'Force the deploy…' }).click();
      const dialog = w.page.getByRole('dialog', { name: 'Force the deploy of weather?' });
      await dialog.waitFor();
      expect(await dialog.innerText()).toContain('tool forecast');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await harness('weather')).toEqual(before);

      await w.page.getByRole('button', { name: 'Force the deploy…' }).click();
      await dialog.getByRole('button', { name: 'Deploy, breaking 1 use' }).click();
      await w.page.getByRole('heading', { name: 'weather 2.0.0' }).waitFor();
      expect(await harness('weather')).toMatchObject({ status: 200, version: '2.0.0' });
      expect(w.dialogs).toEqual([]);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('shows why an image would be refused, and offers no deploy', async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/deploy');
      await w.page.getByLabel('Image file (.wasm)', { exact: false }).setInputFiles(files.broken!);
      const verdict = w.page.locator('.verdict.refused');
      await verdict.waitFor();
      expect(await verdict.innerText()).toContain('missing-export');
      expect(await verdict.innerText()).toContain('berm_tool_b');
      expect(await w.page.getByRole('button', { name: /^Deploy|^Replace|^Force/ }).count()).toBe(0);
      expect((await harness('broken')).status).toBe(404);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('undeploys after a confirmation, and not before', async () => {
    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/harness/forecasts');
      await w.page.getByRole('button', { name: 'Undeploy forecasts…' }).click();
      const dialog = w.page.getByRole('dialog', { name: 'Undeploy forecasts?' });
      await dialog.waitFor();
      // Cancel has the focus, so Enter or Escape never undeploys by accident.
      expect(await w.page.evaluate(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.textContent)).toBe(
        'Cancel',
      );
      await w.page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect((await harness('forecasts')).status).toBe(200);

      await w.page.getByRole('button', { name: 'Undeploy forecasts…' }).click();
      await dialog.getByRole('button', { name: 'Undeploy forecasts' }).click();
      await w.page.getByRole('heading', { name: 'Deployed harnesses' }).waitFor();
      await w.page.locator('tr[data-harness="forecasts"]').waitFor({ state: 'detached' });
      expect((await harness('forecasts')).status).toBe(404);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
