// Use times read from a store: one decoder for every kind (store-codec.ts), which keeps a time only in
// Date.toISOString()'s form (the one the registry and the gate compare as text) and not later than this
// machine's clock allows; and a directory store whose metadata file holds forged times, which bermd reads
// as no use at all.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeMeta, decodeUseTime, Registry, USE_CLOCK_SKEW_MS } from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { removeDir, tempDir } from './daemon.js';
import { seedHarness } from './seed.js';

const DAY = 24 * 3600 * 1000;
const NOW = Date.UTC(2026, 11, 1, 10, 0, 0);

describe('decodeUseTime', () => {
  it("keeps Date.toISOString()'s form, and the same without milliseconds in that form", () => {
    expect(decodeUseTime('2026-12-01T09:59:59.123Z', NOW)).toBe('2026-12-01T09:59:59.123Z');
    expect(decodeUseTime('2026-11-30T10:00:00Z', NOW)).toBe('2026-11-30T10:00:00.000Z');
    expect(decodeUseTime('0001-01-01T00:00:00.000Z', NOW)).toBe('0001-01-01T00:00:00.000Z');
    // A timestamptz column, as node-postgres reads it.
    expect(decodeUseTime(new Date(NOW - DAY), NOW)).toBe(new Date(NOW - DAY).toISOString());
  });

  it('refuses what Date.parse would take but is not that form: "zzz 1", "9", offsets, dates that do not exist', () => {
    for (const text of [
      'zzz 1',
      '9',
      '2026-12-01T10:00:00+00:00',
      '2026-12-01T11:00:00.000+01:00',
      '2026-12-01T10:00:00.000z',
      '2026-12-01 10:00:00Z',
      '2026-12-01T10:00Z',
      '2026-12-01',
      '2026-12-01T10:00:00.0Z',
      'Tue, 01 Dec 2026 10:00:00 GMT',
      '2026-02-30T00:00:00.000Z',
      '2026-12-01T24:00:00.000Z',
      '+002026-12-01T10:00:00.000Z',
      '',
    ]) {
      expect([text, decodeUseTime(text, NOW)]).toEqual([text, null]);
    }
  });

  it('refuses a time later than the clock plus USE_CLOCK_SKEW_MS, and keeps one within it', () => {
    expect(decodeUseTime('9999-12-31T00:00:00Z', NOW)).toBeNull();
    expect(decodeUseTime(new Date(NOW + USE_CLOCK_SKEW_MS + 1), NOW)).toBeNull();
    expect(decodeUseTime(new Date(NOW + USE_CLOCK_SKEW_MS + 1).toISOString(), NOW)).toBeNull();
    expect(decodeUseTime(new Date(NOW + USE_CLOCK_SKEW_MS).toISOString(), NOW)).toBe(new Date(NOW + USE_CLOCK_SKEW_MS).toISOString());
  });

  it('refuses what is not a string or a Date, an invalid Date, and a Date outside years 0000 to 9999', () => {
    for (const value of [null, undefined, 9, Number.POSITIVE_INFINITY, {}, ['2026-12-01T10:00:00.000Z'], true]) {
      expect(decodeUseTime(value, NOW)).toBeNull();
    }
    expect(decodeUseTime(new Date(Number.NaN), NOW)).toBeNull();
    expect(decodeUseTime(new Date(Date.UTC(-1, 0, 1)), NOW)).toBeNull();
  });
});

describe('decodeMeta', () => {
  const meta = (fields: Record<string, unknown>): string =>
    JSON.stringify({ name: 'h', digest: 'sha256:00', deployed_at: '2026-01-01T00:00:00.000Z', ...fields });

  it('keeps each use whose time decodes, and drops the others', () => {
    const read = decodeMeta(
      meta({
        last_used_at: '9999-12-31T00:00:00Z',
        used: {
          tools: {
            a: '2026-11-01T00:00:00.000Z',
            b: 'zzz 1',
            c: '9',
            d: '9999-12-31T00:00:00Z',
            e: 1_700_000_000_000,
            f: '2026-11-02T00:00:00Z',
          },
          events: { ping: '2026-11-03T00:00:00+02:00', pong: '2026-11-03T00:00:00.000Z' },
        },
      }),
      NOW,
    );
    expect(read).toMatchObject({
      last_used_at: null,
      used: { tools: { a: '2026-11-01T00:00:00.000Z', f: '2026-11-02T00:00:00.000Z' }, events: { pong: '2026-11-03T00:00:00.000Z' } },
    });
  });

  it('reads uses that are not objects of times as none', () => {
    for (const used of ['zzz 1', ['2026-11-01T00:00:00.000Z'], { tools: 'zzz 1', events: ['x'] }, null]) {
      expect(decodeMeta(meta({ used, last_used_at: 9 }), NOW)).toMatchObject({ last_used_at: null, used: { tools: {}, events: {} } });
    }
  });
});

describe('a directory store whose metadata holds forged use times', () => {
  let stateDir: string;
  const logger = pino({ level: 'silent' });
  beforeEach(async () => {
    stateDir = await tempDir('bermd-codec-');
  });
  afterEach(async () => {
    await removeDir(stateDir);
  });

  it('lists none of them, lets a deploy break their tools, and writes none of them back', async () => {
    const recent = new Date(Date.now() - DAY).toISOString();
    await seedHarness(stateDir, 'h', await harnessImage(manifestWithTools(['zzz', 'nine', 'far', 'real'])));
    const file = path.join(stateDir, 'harnesses', 'h.json');
    const stored = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(
      file,
      JSON.stringify({
        ...stored,
        last_used_at: '9999-12-31T00:00:00Z',
        used: { tools: { zzz: 'zzz 1', nine: '9', far: '9999-12-31T00:00:00Z', real: recent }, events: {} },
      }),
    );

    const registry = await Registry.open({ stateDir, logger });
    try {
      expect(registry.get('h')).toMatchObject({
        last_used_at: null,
        usage: { tools: { zzz: null, nine: null, far: null, real: recent }, events: {} },
      });
      // Removing the three forged tools breaks them; none was used, so the deploy goes through.
      const result = await registry.deploy('h', await harnessImage(manifestWithTools(['real'], { version: '0.2.0' })));
      expect(result.replaced).toBe(true);
      expect(result.reported.map((b) => [b.tool, b.used, b.last_used_at])).toEqual([
        ['zzz', false, null],
        ['nine', false, null],
        ['far', false, null],
      ]);
      registry.recordUse('h', { tool: 'real' });
    } finally {
      await registry.close();
    }
    const written = JSON.parse(await readFile(file, 'utf8')) as { last_used_at: string; used: { tools: Record<string, string> } };
    expect(Object.keys(written.used.tools)).toEqual(['real']);
    expect(written.used.tools.real! > recent).toBe(true);
    expect(written.last_used_at).toBe(written.used.tools.real);
  });
});
