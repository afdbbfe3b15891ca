// Where a deploy came from, on the page: the registry reference and manifest digest a deploy sent (the
// deploy query's source and source-digest, as crab deploy sends them) in the harness's facts and on its
// history entries, a rollback's entry naming the source of the image it went back to, and a reference
// carrying markup shown as text, never run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import { put } from '../../bermd/test/mcp-client.js';
import type { Browser } from 'playwright-core';
import path from 'node:path';
import { launch, openLive, openPage, overflowsSideways, screenshotDir } from './browser.js';
import { PWNED, weatherImage } from './fixtures.js';

let d: RunningDaemon;
let browser: Browser;
const images: Record<string, Uint8Array> = {};

/** A reference the deploy query admits (no space, no control character) that is also an HTML image whose onerror would set PWNED. */
const HOSTILE_REF = `oci://127.0.0.1:5000/org/weather:<img/src=x/onerror=window.${PWNED}='source'>`;
const PLAIN_REF = 'oci://127.0.0.1:5000/org/weather:2.0.0';
const DIGESTS = { hostile: `sha256:${'ab'.repeat(32)}`, plain: `sha256:${'cd'.repeat(32)}` };

beforeAll(async () => {
  [d, browser, images.v1, images.v2] = await Promise.all([startDaemon(), launch(), weatherImage(1), weatherImage(2)]);
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  if (d) await removeDir(d.stateDir);
});

async function deploy(name: string, bytes: Uint8Array, reference?: string, digest?: string): Promise<void> {
  const query = reference === undefined ? '' : `?${new URLSearchParams({ source: reference, 'source-digest': digest! })}`;
  const res = await put(`${d.url}/harnesses/${name}${query}`, bytes);
  if (res.status !== 200 && res.status !== 201) throw new Error(`deploy ${name}: ${res.status} ${await res.text()}`);
}

const short = (digest: string) => digest.replace(/^sha256:/, '').slice(0, 12);

describe('the source of a deploy on the page', { timeout: 120_000 }, () => {
  it("shows the harness's source and each entry's, a rollback's the image's own, markup as text", async () => {
    await deploy('sourced', images.v1!, HOSTILE_REF, DIGESTS.hostile);
    await deploy('sourced', images.v2!, PLAIN_REF, DIGESTS.plain);
    const back = await fetch(`${d.url}/harnesses/sourced/rollback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(back.status).toBe(200);

    const w = await openPage(browser);
    try {
      await openLive(w, d.url, '#/harness/sourced');
      const facts = w.page.locator('.facts .source');
      await facts.waitFor();
      expect(await facts.locator('.reference').innerText()).toBe(HOSTILE_REF);
      expect(await facts.locator('.source-digest').innerText()).toBe(DIGESTS.hostile);

      const items = w.page.locator('ol.timeline > li');
      await items.nth(2).waitFor();
      expect(await items.count()).toBe(3);
      const shown = [];
      for (let i = 0; i < 3; i++) {
        const item = items.nth(i);
        shown.push([
          await item.getAttribute('data-action'),
          await item.locator('.source .reference').innerText(),
          await item.locator('.source .source-digest').innerText(),
          await item.locator('.source .source-digest').getAttribute('title'),
        ]);
      }
      expect(shown).toEqual([
        ['rollback', HOSTILE_REF, short(DIGESTS.hostile), DIGESTS.hostile],
        ['deploy', PLAIN_REF, short(DIGESTS.plain), DIGESTS.plain],
        ['deploy', HOSTILE_REF, short(DIGESTS.hostile), DIGESTS.hostile],
      ]);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-source.png'), fullPage: true });
      expect(await w.page.locator('main img').count()).toBe(0);
      expect(await w.page.evaluate((flag) => (globalThis as Record<string, unknown>)[flag], PWNED)).toBeUndefined();
      expect(w.errors).toEqual([]);
      expect(w.dialogs).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('shows no source where a deploy gave none, and wraps a long one at 400 px', async () => {
    await deploy('unsourced', images.v1!);
    const long = `oci://registry.example-organisation.internal:5000/${'team/'.repeat(12)}weather:${'1'.repeat(60)}`;
    await deploy('long', images.v1!, long, DIGESTS.plain);

    const w = await openPage(browser, { width: 400, height: 860 });
    try {
      await openLive(w, d.url, '#/harness/unsourced');
      await w.page.locator('ol.timeline > li').first().waitFor();
      expect(await w.page.locator('.facts dt').allInnerTexts()).not.toContain('Source');
      expect(await w.page.locator('ol.timeline .source').count()).toBe(0);

      await w.page.goto(`${d.url}/#/harness/long`);
      await w.page.locator('ol.timeline > li .source').first().waitFor();
      expect(await w.page.locator('.facts .source .reference').innerText()).toBe(long);
      expect(await overflowsSideways(w.page)).toBe(false);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
