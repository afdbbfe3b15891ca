// The compatibility gate in the core, with the clock in the test's hands: which breaks refuse a
// redeploy at the edges of the window, what a forced deploy reports, and that a refusal changes nothing.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ManifestData } from '@berm/manifest';
import { parseOptions } from 'bermd';
import {
  describeWindow,
  type GatedBreak,
  digestOf,
  parseWindow,
  Registry,
  usedWithin,
  type RegistryOptions,
} from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools, sampleManifest } from '../../../test/helpers/harness.js';
import { refusal } from './core.js';
import { removeDir, tempDir } from './daemon.js';

const logger = pino({ level: 'silent' });
const DAY = 24 * 3600 * 1000;
const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const iso = (ms: number): string => new Date(ms).toISOString();

let stateDir: string;
let now: number;
const clock = (): Date => new Date(now);

beforeEach(async () => {
  stateDir = await tempDir('bermd-gate-');
  now = T0;
});
afterEach(async () => {
  await removeDir(stateDir);
});

const open = (options: Partial<RegistryOptions> = {}) => Registry.open({ stateDir, logger, now: clock, ...options });
const metaFile = (name: string) => path.join(stateDir, 'harnesses', `${name}.json`);

/** The breaks a 409 lists: those that refused the deploy, and those only reported. */
async function gateRefusal(p: Promise<unknown>): Promise<{ message: string; breaks: GatedBreak[]; reported: GatedBreak[] }> {
  const error = await refusal(p);
  expect(error.code).toBe('breaks-callers');
  return error.toBody().error as unknown as { message: string; breaks: GatedBreak[]; reported: GatedBreak[] };
}

/** A manifest with an event `alert` whose field `level` is always present (or, with `optional`, not). */
function withAlert(tools: string[], optional = false): ManifestData {
  return manifestWithTools(tools, {
    events: [
      {
        name: 'alert',
        description: 'Something to look at.',
        fields: { type: 'object', properties: { level: { type: 'string' } }, required: optional ? [] : ['level'] },
      },
    ],
  });
}

describe('the compatibility gate', () => {
  it('refuses a break of a tool used less than the window ago, and lets it through from exactly the window on', async () => {
    const registry = await open();
    const v1 = await harnessImage(manifestWithTools(['echo', 'size']));
    const v2 = await harnessImage(manifestWithTools(['size'], { version: '0.2.0' }));
    await registry.deploy('h', v1);
    registry.recordUse('h', { tool: 'echo' });
    const usedAt = iso(T0);

    now = T0 + 30 * DAY - 1;
    const error = await refusal(registry.deploy('h', v2));
    expect(error.code).toBe('breaks-callers');
    expect(error.status).toBe(409);
    expect(error.message).toBe(
      'the image would break callers of h: 1 break in tool echo, used in the last 30 days; deploy with force=true to replace it anyway',
    );
    expect(error.toBody().error).toEqual({
      code: 'breaks-callers',
      message: error.message,
      name: 'h',
      window_seconds: 30 * 24 * 3600,
      breaks: [{ code: 'tool-removed', tool: 'echo', path: '', message: 'tool `echo` was removed', last_used_at: usedAt, used: true }],
      reported: [],
    });
    expect(registry.get('h').digest).toBe(digestOf(v1));

    now = T0 + 30 * DAY;
    const result = await registry.deploy('h', v2);
    expect(result.replaced).toBe(true);
    expect(result.reported).toEqual([
      { code: 'tool-removed', tool: 'echo', path: '', message: 'tool `echo` was removed', last_used_at: usedAt, used: false },
    ]);
    expect(registry.get('h').digest).toBe(digestOf(v2));
    await registry.close();
  });

  it('reports the breaks of tools never used, with a null last use, and refuses only for the used ones', async () => {
    const registry = await open();
    await registry.deploy('h', await harnessImage(manifestWithTools(['a', 'b', 'c'])));
    registry.recordUse('h', { tool: 'b' });
    now += DAY;
    const body = await gateRefusal(registry.deploy('h', await harnessImage(manifestWithTools([]))));
    expect(body.breaks.map((b) => [b.tool, b.used, b.last_used_at])).toEqual([['b', true, iso(T0)]]);
    expect(body.reported.map((b) => [b.tool, b.used, b.last_used_at])).toEqual([
      ['a', false, null],
      ['c', false, null],
    ]);
    // Without the used tool's break, the same kind of change goes through and is only reported.
    const result = await registry.deploy('h', await harnessImage(manifestWithTools(['b'])));
    expect(result.reported.map((b) => [b.code, b.tool, b.used, b.last_used_at])).toEqual([
      ['tool-removed', 'a', false, null],
      ['tool-removed', 'c', false, null],
    ]);
    await registry.close();
  });

  it('refuses an event field that a recent emit relied on becoming optional', async () => {
    const registry = await open();
    await registry.deploy('h', await harnessImage(withAlert(['echo'])));
    registry.recordUse('h', { tool: 'echo' });
    registry.recordUse('h', { event: 'alert' });
    now += 10 * DAY;
    const body = await gateRefusal(registry.deploy('h', await harnessImage(withAlert(['echo'], true))));
    expect(body.breaks).toEqual([
      expect.objectContaining({
        code: 'field-no-longer-always-present',
        event: 'alert',
        path: '/fields/properties/level',
        last_used_at: iso(T0),
        used: true,
      }),
    ]);
    expect(body.message).toContain('1 break in event alert');
    await registry.close();
  });

  it('lets a forced deploy through and reports every break, marking the ones it was forced past', async () => {
    const registry = await open();
    const v1 = await harnessImage(manifestWithTools(['echo', 'size']));
    await registry.deploy('h', v1);
    registry.recordUse('h', { tool: 'size' });
    now += 1000;
    const v2 = await harnessImage(manifestWithTools([], { version: '0.2.0' }));
    await refusal(registry.deploy('h', v2));
    const result = await registry.deploy('h', v2, { force: true });
    expect(result.reported).toEqual([
      { code: 'tool-removed', tool: 'echo', path: '', message: 'tool `echo` was removed', last_used_at: null, used: false },
      { code: 'tool-removed', tool: 'size', path: '', message: 'tool `size` was removed', last_used_at: iso(T0), used: true },
    ]);
    expect(registry.get('h').digest).toBe(digestOf(v2));
    // The usage of the name stays: a tool that comes back is still known as used.
    expect(registry.usage('h')).toEqual({ tools: { size: iso(T0) }, events: {} });
    await registry.close();
  });

  it('leaves the stored harness, its files and the hooks untouched when it refuses', async () => {
    const prepared: string[] = [];
    const registry = await open({ hooks: { prepare: (name, h) => void prepared.push(`${name}@${h.digest}`) } });
    const v1 = await harnessImage(manifestWithTools(['echo']));
    await registry.deploy('h', v1);
    registry.recordUse('h', { tool: 'echo' });
    await registry.close();

    const reopened = await open({ hooks: { prepare: (name, h) => void prepared.push(`${name}@${h.digest}`) } });
    const imageBefore = await readFile(path.join(stateDir, 'harnesses', 'h.wasm'));
    const metaBefore = await readFile(metaFile('h'), 'utf8');
    prepared.length = 0;
    await refusal(reopened.deploy('h', await harnessImage(sampleManifest({ tools: [] }))));
    expect(prepared).toEqual([]);
    expect(await readFile(path.join(stateDir, 'harnesses', 'h.wasm'))).toEqual(imageBefore);
    expect(await readFile(metaFile('h'), 'utf8')).toBe(metaBefore);
    expect(reopened.get('h')).toMatchObject({ digest: digestOf(v1), tools: ['echo'], deployed_at: iso(T0) });
    await reopened.close();
  });

  it('follows the window it is given, and a window of 0 refuses nothing', async () => {
    const narrow = await open({ breaksWindowMs: 12 * 3600 * 1000 });
    await narrow.deploy('h', await harnessImage(manifestWithTools(['echo', 'size'])));
    narrow.recordUse('h', { tool: 'echo' });
    now = T0 + 12 * 3600 * 1000 - 1;
    expect((await refusal(narrow.deploy('h', await harnessImage(manifestWithTools(['size']))))).message).toContain(
      'used in the last 12 hours',
    );
    now = T0 + 12 * 3600 * 1000;
    expect((await narrow.deploy('h', await harnessImage(manifestWithTools(['size'])))).reported).toHaveLength(1);
    await narrow.close();

    const off = await open({ breaksWindowMs: 0 });
    await off.deploy('g', await harnessImage(manifestWithTools(['echo'])));
    off.recordUse('g', { tool: 'echo' });
    const result = await off.deploy('g', await harnessImage(manifestWithTools([])));
    expect(result.reported).toEqual([expect.objectContaining({ tool: 'echo', last_used_at: iso(now), used: false })]);
    await off.close();
  });

  it('counts a use stamped after now (the clock went back) as recent', async () => {
    const registry = await open();
    await registry.deploy('h', await harnessImage(manifestWithTools(['echo'])));
    registry.recordUse('h', { tool: 'echo' }, new Date(T0 + DAY));
    expect((await refusal(registry.deploy('h', await harnessImage(manifestWithTools([]))))).code).toBe('breaks-callers');
    await registry.close();
  });

  it('gates nothing on a first deploy, nor after an undeploy, which forgets the usage', async () => {
    const registry = await open();
    await registry.deploy('h', await harnessImage(manifestWithTools(['echo'])));
    registry.recordUse('h', { tool: 'echo' });
    await registry.undeploy('h');
    const result = await registry.deploy('h', await harnessImage(manifestWithTools(['other'])));
    expect([result.replaced, result.reported]).toEqual([false, []]);
    await registry.close();
  });

  it('gates on usage restored from the store after a restart', async () => {
    const first = await open();
    await first.deploy('h', await harnessImage(manifestWithTools(['echo'])));
    first.recordUse('h', { tool: 'echo' });
    await first.close();

    now = T0 + 29 * DAY;
    const second = await open();
    const body = await gateRefusal(second.deploy('h', await harnessImage(manifestWithTools([]))));
    expect(body.breaks[0]!.last_used_at).toBe(iso(T0));
    await second.close();
  });
});

describe('usage', () => {
  it('is kept per tool and event, moves only later, and is given per tool and event of the manifest', async () => {
    const registry = await open();
    await registry.deploy('h', await harnessImage(withAlert(['echo', 'size'])));
    expect(registry.get('h').usage).toEqual({ tools: { echo: null, size: null }, events: { alert: null } });
    registry.recordUse('h', { tool: 'echo' }, new Date(T0 + 2000));
    registry.recordUse('h', { tool: 'echo' }, new Date(T0 + 1000)); // a call that finished later but started earlier
    registry.recordUse('h', { event: 'alert' }, new Date(T0 + 1500));
    expect(registry.get('h').usage).toEqual({ tools: { echo: iso(T0 + 2000), size: null }, events: { alert: iso(T0 + 1500) } });
    expect(registry.get('h').last_used_at).toBe(iso(T0 + 2000));
    await registry.close();
  });

  it('is not written on the call path: the metadata file changes only when the batch is written', async () => {
    const registry = await open();
    await registry.deploy('h', await harnessImage(manifestWithTools(['echo'])));
    const before = await readFile(metaFile('h'), 'utf8');
    registry.recordUse('h', { tool: 'echo' });
    expect(await readFile(metaFile('h'), 'utf8')).toBe(before);
    await registry.close();
    const written = JSON.parse(await readFile(metaFile('h'), 'utf8'));
    expect(written).toMatchObject({ name: 'h', last_used_at: iso(T0), used: { tools: { echo: iso(T0) }, events: {} } });
  });
});

describe('the window option', () => {
  it('reads days, hours, minutes, seconds and bare seconds, and names them back', () => {
    expect(parseWindow('30d')).toBe(30 * DAY);
    expect(parseWindow('12h')).toBe(12 * 3600 * 1000);
    expect(parseWindow('90m')).toBe(90 * 60 * 1000);
    expect(parseWindow('45s')).toBe(45 * 1000);
    expect(parseWindow('3600')).toBe(3600 * 1000);
    expect(parseWindow('2w')).toBe(14 * DAY);
    expect(parseWindow('0')).toBe(0);
    for (const bad of ['', 'thirty days', '-1d', '1y', '1e3']) expect(parseWindow(bad), bad).toBeUndefined();
    expect(describeWindow(30 * DAY)).toBe('30 days');
    expect(describeWindow(36 * 3600 * 1000)).toBe('36 hours');
    expect(describeWindow(1000)).toBe('1 second');
  });

  it('is --breaks-window, 30 days by default', async () => {
    expect(await parseOptions([])).toMatchObject({ breaksWindowMs: 30 * DAY });
    expect(await parseOptions(['--breaks-window', '12h'])).toMatchObject({ breaksWindowMs: 12 * 3600 * 1000 });
    await expect(parseOptions(['--breaks-window', 'soon'])).rejects.toMatchObject({
      code: 'bad-option',
      message: expect.stringContaining('--breaks-window soon'),
    });
  });

  it('usedWithin: nothing without a use, nothing with a window of 0', () => {
    const at = new Date(T0);
    expect(usedWithin(null, at, DAY)).toBe(false);
    expect(usedWithin(iso(T0 - DAY + 1), at, DAY)).toBe(true);
    expect(usedWithin(iso(T0 - DAY), at, DAY)).toBe(false);
    expect(usedWithin(iso(T0), at, 0)).toBe(false);
  });
});
