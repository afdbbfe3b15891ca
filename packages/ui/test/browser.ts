// Debian's chromium driven by playwright-core (which never downloads a browser here), against a
// real bermd. Each page records what must never happen on it: a script error, a dialog, a request
// to anywhere but bermd, a Content-Security-Policy violation.
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** As Debian's chromium runs headless as root on a machine with no network beyond loopback. */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless chromium; playwright gives each launch a fresh, empty user-data-dir. */
export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

export interface Watched {
  page: Page;
  context: BrowserContext;
  /** Uncaught errors, console errors, CSP violations. */
  errors: string[];
  /** Dialogs the page opened (alert, confirm, prompt): there must be none. */
  dialogs: string[];
  /** Every URL the page requested. */
  requests: string[];
  close(): Promise<void>;
}

export interface PageOptions {
  width?: number;
  height?: number;
  colorScheme?: 'light' | 'dark';
}

export async function openPage(browser: Browser, options: PageOptions = {}): Promise<Watched> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1100, height: options.height ?? 800 },
    colorScheme: options.colorScheme ?? 'light',
  });
  const page = await context.newPage();
  const watched: Watched = { page, context, errors: [], dialogs: [], requests: [], close: () => context.close() };
  page.on('pageerror', (e) => watched.errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // Chromium logs every 4xx the page is answered, which the page expects (a 409 dry run) and shows itself.
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()))
      watched.errors.push(`console: ${m.text()}`);
  });
  page.on('dialog', (d) => {
    watched.dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  page.on('request', (r) => watched.requests.push(r.url()));
  return watched;
}

/** Loads the page and waits until its change stream is open (the list is fetched right after). */
export async function openLive(w: Watched, url: string, hash = '#/'): Promise<void> {
  await w.page.goto(`${url}/${hash}`);
  await w.page.locator('[data-stream="live"]').waitFor();
}

/** Where screenshots go: BERM_UI_SCREENSHOTS (e.g. `docs`, to refresh the committed ones), else a temporary directory. */
export async function screenshotDir(): Promise<string> {
  const dir = process.env.BERM_UI_SCREENSHOTS ?? path.join(os.tmpdir(), 'berm-ui-screenshots');
  await mkdir(dir, { recursive: true });
  return dir;
}

/** An element as the scripts below read it in the page (the tests' typecheck is Node's, without the DOM's types). */
interface ProbedElement {
  tagName: string;
  id: string;
  type?: string;
  checked?: boolean;
  disabled?: boolean;
  textContent: string | null;
  labels?: ArrayLike<unknown> | null;
  getClientRects(): ArrayLike<unknown>;
  closest(selector: string): unknown;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  blur(): void;
}

/** The page's document, as the scripts below read it. */
export interface PageDocument {
  querySelectorAll(selector: string): Iterable<ProbedElement>;
  activeElement: ProbedElement | null;
  documentElement: { scrollWidth: number; clientWidth: number };
}

/**
 * Every control on the page reached by Tab, in order, and each one's accessible name: a control
 * Tab never reaches, or one without a name, is a defect.
 */
export async function tabThrough(page: Page): Promise<{ unreached: string[]; unnamed: string[] }> {
  const controls = await page.evaluate(() => {
    const doc = (globalThis as unknown as { document: PageDocument }).document;
    const all = [...doc.querySelectorAll('main a[href], main button, main input, main select, main textarea, main summary')].filter(
      (el: ProbedElement) =>
        !el.disabled &&
        el.getClientRects().length > 0 &&
        !(el.type === 'radio' && !el.checked) &&
        (el.tagName === 'SUMMARY' || !el.closest('details:not([open])')),
    );
    all.forEach((el, i) => el.setAttribute('data-tab-probe', String(i)));
    return all.length;
  });
  await page.evaluate(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.blur());
  const reached = new Set<string>();
  for (let i = 0; i < controls * 2 + 10 && reached.size < controls; i++) {
    await page.keyboard.press('Tab');
    const probe = await page.evaluate(
      () => (globalThis as unknown as { document: PageDocument }).document.activeElement?.getAttribute('data-tab-probe') ?? null,
    );
    if (probe !== null) reached.add(probe);
  }
  const found = await page.evaluate(
    (reachedList: string[]) => {
      const doc = (globalThis as unknown as { document: PageDocument }).document;
      const describe = (el: ProbedElement) =>
        `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
      const named = (el: ProbedElement) => {
        if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')) return true;
        if (el.labels && el.labels.length > 0) return true;
        if (['A', 'BUTTON', 'SUMMARY'].includes(el.tagName)) return (el.textContent ?? '').trim() !== '';
        return false;
      };
      const probes = [...doc.querySelectorAll('[data-tab-probe]')];
      return {
        unreached: probes.filter((el: ProbedElement) => !reachedList.includes(el.getAttribute('data-tab-probe') ?? '')).map(describe),
        unnamed: probes.filter((el: ProbedElement) => !named(el)).map(describe),
      };
    },
    [...reached],
  );
  await page.evaluate(() => (globalThis as unknown as { document: PageDocument }).document.activeElement?.blur());
  return found;
}

/** Whether the page scrolls sideways (it must not, at any width down to 400 px). */
export function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: PageDocument }).document;
    return doc.documentElement.scrollWidth > doc.documentElement.clientWidth;
  });
}
