// The one grammar of sizes and durations: every spelling the daemon's flags, the deploy query and the
// breaks window took before they shared it still reads the same, and what is printed reads back.
import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  describeDuration,
  formatDuration,
  formatSize,
  parseDuration,
  parseSize,
  readDurationLimit,
  readSizeLimit,
} from '../dist/units.js';

describe('durations', () => {
  it('reads every spelling the time limits took (ms, s, m; a bare number is seconds; decimals; a space)', () => {
    const cases: Array<[string, number]> = [
      ['500ms', 500],
      ['10s', 10_000],
      ['1.5s', 1500],
      ['2m', 120_000],
      ['3', 3000],
      ['0.25', 250],
      [' 7 s ', 7000],
    ];
    for (const [text, ms] of cases) expect([text, parseDuration(text)]).toEqual([text, ms]);
  });

  it('reads every spelling the breaks window took (h, d, w too; 0)', () => {
    const cases: Array<[string, number]> = [
      ['30d', 30 * DAY_MS],
      ['12h', 12 * 3600_000],
      ['90m', 90 * 60_000],
      ['45s', 45_000],
      ['2w', 14 * DAY_MS],
      ['3600', 3600_000],
      ['0', 0],
    ];
    for (const [text, ms] of cases) expect([text, parseDuration(text)]).toEqual([text, ms]);
  });

  it('refuses what is not a duration', () => {
    for (const bad of ['', 'soon', 'thirty days', '-1d', '1y', '1e3', '10 S', '1h30m', 'ms'])
      expect(parseDuration(bad), bad).toBeUndefined();
  });

  it('bounds a time limit at 1 ms, with a message naming what was given', () => {
    expect(readDurationLimit('--call-timeout', '2h')).toBe(7_200_000);
    expect(readDurationLimit('--call-timeout', 'soon')).toBe('--call-timeout soon: expected a duration such as 500ms, 10s or 2m');
    expect(readDurationLimit('timeout', '0s')).toBe('timeout 0s: must be at least 1ms');
  });

  it('prints durations in the grammar, and what it prints reads back', () => {
    for (const ms of [1, 500, 1500, 10_000, 120_000, 90_000, 3600_000, 12 * 3600_000, DAY_MS, 14 * DAY_MS, 36 * 3600_000]) {
      expect(parseDuration(formatDuration(ms)), formatDuration(ms)).toBe(ms);
    }
    expect([formatDuration(500), formatDuration(10_000), formatDuration(120_000), formatDuration(1500)]).toEqual([
      '500ms',
      '10s',
      '2m',
      '1500ms',
    ]);
  });

  it('describes durations in words, with the largest unit that divides them', () => {
    expect(describeDuration(30 * DAY_MS)).toBe('30 days');
    expect(describeDuration(36 * 3600_000)).toBe('36 hours');
    expect(describeDuration(90_000)).toBe('90 seconds');
    expect(describeDuration(1000)).toBe('1 second');
    expect(describeDuration(1500)).toBe('1500 ms');
  });
});

describe('sizes', () => {
  it('reads bytes and K, M, G in either case, with or without i and B', () => {
    const K = 1024;
    const cases: Array<[string, number]> = [
      ['1048576', 1048576],
      ['512K', 512 * K],
      ['512k', 512 * K],
      ['64M', 64 * K * K],
      ['64MiB', 64 * K * K],
      ['64mb', 64 * K * K],
      ['1G', K * K * K],
      ['2 KiB', 2 * K],
    ];
    for (const [text, bytes] of cases) expect([text, parseSize(text)]).toEqual([text, bytes]);
    for (const bad of ['', 'big', '1.5M', '-1', '1T', '64B', 'M']) expect(parseSize(bad), bad).toBeUndefined();
  });

  it('bounds a size limit at 1 byte, with a message naming what was given', () => {
    expect(readSizeLimit('max_memory', '1K')).toBe(1024);
    expect(readSizeLimit('--max-image-size', 'big')).toBe('--max-image-size big: expected a byte count such as 1048576, 512K or 64M');
    expect(readSizeLimit('--max-image-size', '0')).toBe('--max-image-size 0: must be at least 1 byte');
  });

  it('prints sizes in the grammar, and what it prints reads back', () => {
    for (const bytes of [1, 1000, 1024, 65536, 1536 * 1024, 64 * 1024 * 1024, 1024 ** 3]) expect(parseSize(formatSize(bytes))).toBe(bytes);
    expect([formatSize(64 * 1024 * 1024), formatSize(512 * 1024), formatSize(1000)]).toEqual(['64M', '512K', '1000']);
  });
});
