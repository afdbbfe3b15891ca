// The deploy history on the page, against one real bermd with `--access` principals: a harness's
// timeline after deploys, forced deploys (their breaks marked, text from the image shown as text) and
// an undeploy, with "Older" for the next page and a narrow layout; a rollback that shows its dry run's
// verdict before anything changes, then goes through; a rollback the gate refuses, shown with its
// breaks, not forceable by a deployer without berm:force and forced by one with it; the control greyed
// for a reader, naming berm:deploy; a name undeployed lately listed under "Recently undeployed", its
// page reached from there, and its undeploy undone from that page.
import path from 'node:path';
import type { ManifestData } from '@berm/manifest';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, writeAccess } from '../../bermd/test/access.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { put } from '../../bermd/test/mcp-client.js';
import { seedHarness } from '../../bermd/test/seed.js';
import { harnessImage } from '../../../test/helpers/harness.js';
import { sampleManifest } from '../../../test/helpers/wat.js';
import {
  launch,
  openPage,
  overflowsSideways,
  type PageDocument,
  type PageOptions,
  screenshotDir,
  tabThrough,
  type Watched,
} from './browser.js';
import { HOSTILE_IMG, PWNED, weatherImage } from './fixtures.js';

const HOUR = 3600 * 1000;

/** A principal name as long as bermd allows most of, without a space to break it at. */
const LONG = `release-train.deployer@builds.ci.example-organisation.internal:pipeline+nightly-${'0123456789'.repeat(3)}`;

const PRINCIPALS = {
  admin: ['berm:read', 'berm:deploy', 'berm:force', 'berm:call'],
  deployer: ['berm:read', 'berm:deploy'],
  reader: ['berm:read'],
  [LONG]: ['berm:read', 'berm:deploy'],
} as Record<string, string[]>;

/**
 * `echo` with an argument named like an HTML image whose `onerror` would set PWNED: optional in
 * version 1, whose version string carries the same markup, and required in version 2, which breaks a
 * caller of `echo` (and the break's path names that argument).
 */
function timelineManifest(version: 1 | 2): ManifestData {
  return sampleManifest({
    version: version === 1 ? `1.0.0 ${HOSTILE_IMG}` : '2.0.0',
    tools: [
      {
        name: 'echo',
        description: 'Returns its query.',
        arguments: {
          type: 'object',
          properties: { query: { type: 'string' }, [HOSTILE_IMG]: { type: 'string' } },
          required: version === 1 ? ['query'] : ['query', HOSTILE_IMG],
        },
      },
    ],
  });
}

let d: RunningDaemon;
let browser: Browser;
let dir: string;
let tokens: Record<string, string>;
const images: Record<string, Uint8Array> = {};

beforeAll(async () => {
  dir = await tempDir('berm-ui-history-');
  const access = await writeAccess(
    dir,
    Object.entries(PRINCIPALS).map(([name, scopes]) => ({ name, scopes })),
  );
  tokens = access.tokens;
  [images.v1, images.v2, images.t1, images.t2] = await Promise.all([
    weatherImage(1),
    weatherImage(2),
    harnessImage(timelineManifest(1)),
    harnessImage(timelineManifest(2)),
  ]);
  const stateDir = await tempDir('berm-ui-history-state-');
  // Callers used `echo` and `forecast` two hours ago: an image that breaks them is refused unless forced.
  await seedHarness(stateDir, 'timeline', images.t1!, { tools: { echo: Date.now() - 2 * HOUR } });
  await seedHarness(stateDir, 'gate', images.v2!, { tools: { forecast: Date.now() - 2 * HOUR } });
  [d, browser] = await Promise.all([startDaemon({ stateDir, args: ['--access', access.file] }), launch()]);
  // Version 1 of `gate` makes `units` optional again, which breaks no caller; going back to 2 would.
  await deploy('gate', images.v1!);
  for (const name of ['rolling', 'readonly']) {
    await deploy(name, images.v1!);
    await deploy(name, images.v2!);
  }
  await deploy('gone', images.v1!);
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  if (d) await removeDir(d.stateDir);
  if (dir) await removeDir(dir);
});

async function deploy(name: string, bytes: Uint8Array, by = 'admin', force = false): Promise<void> {
  const res = await put(`${d.url}/harnesses/${name}${force ? '?force=true' : ''}`, bytes, { authorization: `Bearer ${tokens[by]}` });
  if (res.status !== 200 && res.status !== 201) throw new Error(`deploy ${name}: ${res.status} ${await res.text()}`);
}

const api = (path: string, init: RequestInit = {}) => as(tokens.admin, `${d.url}${path}`, init);

async function served(name: string): Promise<{ status: number; version?: string; digest?: string }> {
  const res = await api(`/harnesses/${name}`);
  return res.ok ? { status: res.status, ...((await res.json()) as { version: string; digest: string }) } : { status: res.status };
}

interface Entry {
  action: string;
  at: string;
  principal: string | null;
  replica: string;
  forced_past: unknown[];
  from: { digest: string; version: string | null } | null;
  to: { digest: string; version: string | null } | null;
}

async function historyOf(name: string): Promise<Entry[]> {
  return ((await (await api(`/harnesses/${name}/history`)).json()) as { entries: Entry[] }).entries;
}

/** A page signed in as `name` at `hash`, as a person signs in; resolves once the header names it and the change stream is open. */
async function signedIn(name: string, hash: string, options: PageOptions = {}): Promise<Watched> {
  const w = await openPage(browser, options);
  await w.page.goto(`${d.url}/${hash}`);
  await w.page.getByRole('heading', { name: 'This bermd asks for a token' }).waitFor();
  await w.page.getByLabel('Token', { exact: true }).fill(tokens[name]!);
  await w.page.getByRole('button', { name: 'Use this token' }).click();
  expect(await w.page.locator('[data-principal]').innerText()).toBe(name);
  await w.page.locator('[data-stream="live"]').waitFor();
  return w;
}

/** Each rollback request the page sent: its query and body. */
function rollbacksSent(w: Watched): { query: string; body: string | null }[] {
  const sent: { query: string; body: string | null }[] = [];
  w.page.on('request', (r) => {
    const url = new URL(r.url());
    if (r.method() === 'POST' && url.pathname.endsWith('/rollback')) sent.push({ query: url.search, body: r.postData() });
  });
  return sent;
}

const short = (digest: string) => digest.replace(/^sha256:/, '').slice(0, 12);

describe('the deploy history on the page', { timeout: 120_000 }, () => {
  it("shows a harness's changes newest first, the forced ones marked with what they broke, and follows an undeploy", async () => {
    // Three times over: version 2, forced past the break of `echo`, then version 1 again by another principal.
    for (let i = 0; i < 3; i++) {
      await deploy('timeline', images.t2!, 'admin', true);
      await deploy('timeline', images.t1!, LONG);
    }
    const entries = await historyOf('timeline');
    expect(entries.map((e) => [e.principal, e.forced_past.length])).toEqual([
      [LONG, 0],
      ['admin', 1],
      [LONG, 0],
      ['admin', 1],
      [LONG, 0],
      ['admin', 1],
    ]);
    // At 400 px, in the dark too: long names and digests wrap, nothing scrolls sideways.
    for (const colorScheme of ['light', 'dark'] as const) {
      const narrow = await signedIn('admin', '#/harness/timeline', { width: 400, height: 860, colorScheme });
      try {
        await narrow.page.locator('ol.timeline > li.forced').first().waitFor();
        expect(await overflowsSideways(narrow.page)).toBe(false);
        expect(await tabThrough(narrow.page)).toEqual({ unreached: [], unnamed: [] });
        await narrow.page.screenshot({ path: path.join(await screenshotDir(), `ui-history-400-${colorScheme}.png`), fullPage: true });
        expect(narrow.errors).toEqual([]);
      } finally {
        await narrow.close();
      }
    }

    const w = await signedIn('admin', '#/harness/timeline');
    try {
      const items = w.page.locator('ol.timeline > li');
      await items.first().waitFor();
      // A page of five; "Older" reads the sixth.
      expect(await items.count()).toBe(5);
      const first = items.nth(0);
      expect(await first.getAttribute('data-action')).toBe('deploy');
      expect(await first.locator('.change').innerText()).toBe(
        `Deployed 2.0.0 ${short(entries[0]!.from!.digest)} → 1.0.0 ${HOSTILE_IMG} ${short(entries[0]!.to!.digest)}`,
      );
      expect(await first.locator('.principal').innerText()).toBe(LONG);
      expect(await first.locator('.replica').innerText()).toBe(entries[0]!.replica);
      const when = first.locator('time');
      expect(await when.getAttribute('datetime')).toBe(entries[0]!.at);
      expect(await when.getAttribute('title')).toBe(entries[0]!.at);
      expect(await when.innerText()).toMatch(/ago$|^just now$/);
      expect(await first.locator('code').first().getAttribute('title')).toBe(entries[0]!.from!.digest);

      const forced = items.nth(1);
      expect(await forced.getAttribute('class')).toBe('deploy forced');
      expect(await forced.locator('.mark').innerText()).toBe('forced');
      const broke = forced.locator('.forced-past');
      expect(await broke.locator('strong').innerText()).toBe('Forced past 1 break that refused it:');
      const line = await broke.locator('li').innerText();
      expect(line).toContain('tool echo');
      expect(line).toContain('argument-newly-required');
      expect(line).toContain(`/arguments/properties/${HOSTILE_IMG}`);
      expect(line).toContain('last used 2 hours ago');
      // Marked in the colour of the "forced" mark, which is not the text's, where an entry that broke nothing has no such block.
      const colours = await w.page.evaluate(() => {
        const g = globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string>; document: PageDocument };
        const style = (selector: string) => g.getComputedStyle([...g.document.querySelectorAll(selector)][0]);
        return {
          border: style('.forced-past').borderLeftColor,
          width: style('.forced-past').borderLeftWidth,
          mark: style('.timeline .mark.forced').color,
          text: style('body').color,
        };
      });
      expect(colours.border).toBe(colours.mark);
      expect(colours.border).not.toBe(colours.text);
      expect(colours.width).toBe('4px');
      expect(await w.page.locator('ol.timeline > li.forced').count()).toBe(2);
      expect(await items.nth(0).locator('.forced-past').count()).toBe(0);

      // The version and the argument's name are text: nothing became an element, nothing ran.
      expect(await w.page.locator('main img').count()).toBe(0);
      expect(await w.page.evaluate((flag) => (globalThis as Record<string, unknown>)[flag], PWNED)).toBeUndefined();

      await w.page.getByRole('button', { name: 'Older' }).click();
      await items.nth(5).waitFor();
      expect(await items.count()).toBe(6);
      expect(await items.nth(5).locator('.principal').innerText()).toBe('admin');
      expect(await items.nth(5).getAttribute('class')).toBe('deploy forced');
      expect(await w.page.getByRole('button', { name: 'Older' }).count()).toBe(0);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-history.png'), fullPage: true });

      // Undeployed by someone else: the page, still open, becomes the undeployed name's, its history topped by the undeploy.
      expect((await api('/harnesses/timeline', { method: 'DELETE' })).status).toBe(204);
      await w.page.getByRole('heading', { name: 'timeline undeployed', exact: true }).waitFor();
      await w.page.locator('ol.timeline > li[data-action="undeploy"]').waitFor();
      expect(await items.count()).toBe(5);
      expect(await items.nth(0).locator('.change').innerText()).toBe(
        `Undeployed 1.0.0 ${HOSTILE_IMG} ${short(entries[0]!.to!.digest)} → nothing`,
      );
      expect(await items.nth(0).locator('.principal').innerText()).toBe('admin');
      expect(w.dialogs).toEqual([]);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("rolls back only once the dry run's verdict is confirmed, and the page shows what it serves then", async () => {
    const before = await served('rolling');
    const kept = (await (await api('/harnesses/rolling/images')).json()) as { retained: { digest: string; version: string }[] };
    const previous = kept.retained[0]!;
    const w = await signedIn('admin', '#/harness/rolling');
    const sent = rollbacksSent(w);
    try {
      await w.page.getByRole('heading', { name: 'rolling 2.0.0', exact: true }).waitFor();
      await w.page.getByLabel('Roll back to').waitFor();
      const choices = await w.page.getByLabel('Roll back to').locator('option').allInnerTexts();
      expect(choices[0]).toBe(`The previous image (1.4.0, ${short(previous.digest)})`);
      expect(choices[1]).toMatch(new RegExp(`^1\\.4\\.0 · ${short(previous.digest)} · retained (just now|.* ago)$`));
      expect(await tabThrough(w.page)).toEqual({ unreached: [], unnamed: [] });

      await w.page.getByRole('button', { name: 'Roll back…' }).click();
      const verdict = w.page.locator('.verdict.ok');
      await verdict.waitFor();
      expect(await verdict.locator('h3').innerText()).toBe(`A rollback would serve rolling 1.4.0 (${short(previous.digest)})`);
      expect(await verdict.innerText()).toContain(`In place of 2.0.0 ${short(before.digest!)}.`);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-rollback.png'), fullPage: true });
      // The dry run changed nothing.
      expect(await served('rolling')).toEqual(before);
      expect((await historyOf('rolling'))[0]!.action).toBe('deploy');

      await verdict.getByRole('button', { name: 'Roll back to 1.4.0' }).click();
      await w.page.getByRole('heading', { name: 'rolling 1.4.0', exact: true }).waitFor();
      expect(await served('rolling')).toMatchObject({ status: 200, version: '1.4.0', digest: previous.digest });
      const top = w.page.locator('ol.timeline > li').first();
      await w.page.locator('ol.timeline > li[data-action="rollback"]').waitFor();
      expect(await top.locator('.change').innerText()).toBe(`Rolled back 2.0.0 ${short(before.digest!)} → 1.4.0 ${short(previous.digest)}`);
      expect(await top.locator('.principal').innerText()).toBe('admin');
      await verdict.waitFor({ state: 'detached' });
      // One step back was checked; what the check named is what was rolled back to.
      expect(sent).toEqual([
        { query: '?dry-run=true', body: '{"steps":1}' },
        { query: '', body: JSON.stringify({ to: previous.digest }) },
      ]);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('shows a rollback the gate refuses with its breaks, offers the force only with berm:force, and forces it then', async () => {
    const before = await served('gate');
    const deployer = await signedIn('deployer', '#/harness/gate');
    try {
      await deployer.page.getByRole('heading', { name: 'gate 1.4.0', exact: true }).waitFor();
      await deployer.page.getByRole('button', { name: 'Roll back…' }).click();
      const refusal = deployer.page.locator('.verdict.gate');
      await refusal.waitFor();
      expect(await refusal.locator('h3').innerText()).toBe('A rollback would be refused: it breaks what callers used in the last 30 days');
      const breaks = await refusal.locator('ul.breaks').innerText();
      expect(breaks).toContain('tool forecast');
      expect(breaks).toContain('argument-newly-required');
      expect(breaks).toContain('/arguments/properties/units');
      expect(breaks).toContain('last used 2 hours ago');
      expect(await refusal.getByRole('button', { name: 'Roll back anyway (force)' }).count()).toBe(0);
      expect(await refusal.locator('[data-cannot-force]').innerText()).toBe(
        'Needs the scope berm:force, which deployer does not hold: the rollback cannot be forced from here.',
      );
      expect(await served('gate')).toEqual(before);
      await deployer.page.screenshot({ path: path.join(await screenshotDir(), 'ui-rollback-refused.png'), fullPage: true });
      expect(deployer.errors).toEqual([]);
    } finally {
      await deployer.close();
    }

    const admin = await signedIn('admin', '#/harness/gate');
    try {
      await admin.page.getByRole('button', { name: 'Roll back…' }).click();
      const refusal = admin.page.locator('.verdict.gate');
      await refusal.waitFor();
      expect(await served('gate')).toEqual(before);
      await refusal.getByRole('button', { name: 'Roll back anyway (force)' }).click();
      await admin.page.getByRole('heading', { name: 'gate 2.0.0', exact: true }).waitFor();
      expect(await served('gate')).toMatchObject({ status: 200, version: '2.0.0' });
      const top = admin.page.locator('ol.timeline > li').first();
      await admin.page.locator('ol.timeline > li[data-action="rollback"]').waitFor();
      expect(await top.getAttribute('class')).toBe('rollback forced');
      expect(await top.locator('.forced-past li').innerText()).toContain('tool forecast');
      expect(admin.errors).toEqual([]);
    } finally {
      await admin.close();
    }
  });

  it('shows a reader the history with the rollback greyed, naming berm:deploy', async () => {
    const w = await signedIn('reader', '#/harness/readonly');
    try {
      await w.page.locator('ol.timeline > li').first().waitFor();
      expect(await w.page.locator('ol.timeline > li').count()).toBe(2);
      const needsDeploy = 'Needs the scope berm:deploy, which reader does not hold';
      const button = w.page.getByRole('button', { name: 'Roll back…' });
      expect(await button.isDisabled()).toBe(true);
      expect(await button.getAttribute('title')).toBe(needsDeploy);
      expect(await w.page.getByLabel('Roll back to').isDisabled()).toBe(true);
      expect(await w.page.locator('[data-cannot-rollback]').innerText()).toBe(`${needsDeploy}: nothing can be rolled back from here.`);
      expect(w.requests.filter((u) => u.endsWith('/rollback') || u.includes('/rollback?'))).toEqual([]);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('lists a name undeployed lately under the deployed ones, and undoes its undeploy from its page', async () => {
    const { digest } = await served('gone');
    expect((await api('/harnesses/gone', { method: 'DELETE' })).status).toBe(204);
    // The list beside it, narrow.
    const list = await signedIn('admin', '#/', { width: 400, height: 860 });
    const w = await signedIn('admin', '#/');
    const sent = rollbacksSent(w);
    try {
      await list.page.locator('tr[data-undeployed="gone"]').waitFor();
      expect(await overflowsSideways(list.page)).toBe(false);
      await list.page.screenshot({ path: path.join(await screenshotDir(), 'ui-undeployed-list-400.png'), fullPage: true });
      const row = w.page.locator('tr[data-undeployed="gone"]');
      await row.waitFor();
      const cells = await row.locator('th, td').allInnerTexts();
      expect([cells[0], cells[2], cells[3]]).toEqual(['gone', 'admin', `1.4.0 ${short(digest!)}`]);
      expect(cells[1]).toMatch(/ago$|^just now$/);
      expect(await w.page.locator('tr[data-harness="gone"]').count()).toBe(0);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-undeployed-list.png'), fullPage: true });

      await row.getByRole('link', { name: 'gone' }).click();
      await w.page.getByRole('heading', { name: 'gone undeployed', exact: true }).waitFor();
      const top = w.page.locator('ol.timeline > li').first();
      await top.waitFor();
      expect(await top.getAttribute('data-action')).toBe('undeploy');
      // Where a deployed harness shows its tools, an undeployed one shows none.
      expect(await w.page.getByRole('article', { name: /^tool / }).count()).toBe(0);
      await w.page.screenshot({ path: path.join(await screenshotDir(), 'ui-undeployed.png'), fullPage: true });

      await w.page.getByRole('button', { name: 'Redeploy what it served…' }).click();
      const verdict = w.page.locator('.verdict.ok');
      await verdict.waitFor();
      expect(await verdict.locator('h3').innerText()).toBe(`A redeploy would serve gone 1.4.0 (${short(digest!)}) again`);
      expect((await served('gone')).status).toBe(404);

      await verdict.getByRole('button', { name: 'Redeploy gone' }).click();
      await w.page.getByRole('heading', { name: 'gone 1.4.0', exact: true }).waitFor();
      await w.page.getByRole('article', { name: 'tool forecast' }).waitFor();
      expect(await served('gone')).toMatchObject({ status: 200, version: '1.4.0', digest });
      await w.page.locator('ol.timeline > li[data-action="rollback"]').waitFor();
      expect(await top.locator('.change').innerText()).toBe(`Rolled back nothing → 1.4.0 ${short(digest!)}`);
      // The dry run is the rollback with no body; the redeploy names the image it checked.
      expect(sent).toEqual([
        { query: '?dry-run=true', body: null },
        { query: '', body: JSON.stringify({ to: digest }) },
      ]);

      // The list open meanwhile moves it back among the deployed.
      await list.page.locator('tr[data-undeployed="gone"]').waitFor({ state: 'detached' });
      await list.page.locator('tr[data-harness="gone"]').waitFor();
      expect(w.errors).toEqual([]);
      expect(list.errors).toEqual([]);
    } finally {
      await w.close();
      await list.close();
    }
  });
});
