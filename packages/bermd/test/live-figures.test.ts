// The live figures' arithmetic on an injected clock: counts per tool and kind, the last minute's ten-
// second slots rolling over, the hour's minutes, a gap longer than the hour, percentiles against the
// nearest rank of the sorted durations within the stated error, and only what is deployed kept.
import { describe, expect, it } from 'vitest';
import { LiveFigures } from '../dist/telemetry/index.js';

/** Figures on a clock the test moves (milliseconds), starting at 0. */
function figuresAt(start = 0) {
  let now = start;
  const figures = new LiveFigures(
    () => now,
    () => Date.UTC(2026, 0, 1),
  );
  return {
    figures,
    at(ms: number) {
      now = ms;
    },
    tool(harness: string, tool: string) {
      const found = figures.harness(harness)?.tools.find((t) => t.name === tool);
      if (found === undefined) throw new Error(`${harness}.${tool} has no figures`);
      return found;
    },
  };
}

/** A call of `ms` milliseconds that ran (half waiting, half running, as the runtime tells them apart). */
const ran = (ms: number): [number, number] => [ms / 2000, ms / 2000];

describe('live figures', () => {
  it('counts calls per tool and kind, with the error rate, since start and over the last minute', () => {
    const f = figuresAt(1_000);
    f.figures.deployed('h', ['a', 'b']);
    for (let i = 0; i < 3; i++) f.figures.callEnded('h', 'a', undefined, ...ran(2));
    f.figures.callEnded('h', 'a', 'guest-error', ...ran(2));
    f.figures.callEnded('h', 'a', 'invalid-arguments');
    f.figures.callEnded('h', 'a', 'timeout', ...ran(300));
    f.figures.callEnded('h', 'a', 'busy');
    const a = f.tool('h', 'a');
    for (const window of [a.since_start, a.last_minute]) {
      expect(window.calls).toBe(7);
      expect(window.errors).toEqual({
        tool_error: 1,
        refused: 1,
        timeout: 1,
        memory: 0,
        result_too_large: 0,
        busy: 1,
        cancelled: 0,
        error: 0,
      });
      expect(window.error_rate).toBeCloseTo(4 / 7, 10);
    }
    // A tool never called is listed, with nothing counted and no rate or durations to speak of.
    const b = f.tool('h', 'b');
    expect(b.since_start).toMatchObject({ calls: 0, error_rate: null, p50_ms: null, p99_ms: null });
    expect(b.last_hour.calls.every((n) => n === 0)).toBe(true);
    // Durations only of the five calls that ran: the refusal and the busy one have none.
    expect(a.since_start.p50_ms).toBeLessThan(3);
    expect(a.since_start.p99_ms).toBeGreaterThan(250);
  });

  it('drops a ten-second slot from the last minute once six have passed, and keeps it in the hour', () => {
    const f = figuresAt(0);
    f.figures.deployed('h', ['a']);
    f.at(9_999);
    f.figures.callEnded('h', 'a', undefined, ...ran(1));
    f.figures.callEnded('h', 'a', 'trap', ...ran(1));
    f.at(15_000);
    f.figures.callEnded('h', 'a', undefined, ...ran(1));
    // The first slot (0 to 10 s) is still among the six at 59.999 s.
    f.at(59_999);
    expect(f.tool('h', 'a').last_minute.calls).toBe(3);
    // At 60 s the slot under way is the seventh: the first leaves the minute, the second stays.
    f.at(60_000);
    expect(f.tool('h', 'a').last_minute).toMatchObject({ calls: 1, error_rate: 0 });
    f.at(69_999);
    expect(f.tool('h', 'a').last_minute.calls).toBe(1);
    f.at(70_000);
    expect(f.tool('h', 'a').last_minute).toMatchObject({ calls: 0, error_rate: null, p50_ms: null });
    const hour = f.tool('h', 'a').last_hour;
    expect(hour.calls).toHaveLength(60);
    // Minute 0's three calls, one failed, are the point before the minute under way.
    expect([hour.calls[58], hour.errors[58], hour.calls[59], hour.errors[59]]).toEqual([3, 1, 0, 0]);
    expect(f.tool('h', 'a').since_start.calls).toBe(3);
  });

  it('moves the hour a minute at a time, and forgets all of it after a gap longer than the hour', () => {
    const f = figuresAt(0);
    f.figures.deployed('h', ['a', 'b']);
    f.figures.callEnded('h', 'a', undefined, ...ran(1));
    f.at(30 * 60_000 + 5);
    f.figures.callEnded('h', 'a', 'memory-limit', ...ran(1));
    f.figures.callEnded('h', 'b', undefined, ...ran(1));
    f.at(59 * 60_000);
    let hour = f.tool('h', 'a').last_hour;
    // Minute 0 is the oldest point at minute 59; minute 30 is 29 minutes back from the last.
    expect([hour.calls[0], hour.calls[30], hour.errors[30], hour.calls[59]]).toEqual([1, 1, 1, 0]);
    expect(hour.calls.reduce((x, y) => x + y)).toBe(2);
    // The harness's series sums its tools.
    const summed = f.figures.summary().harnesses.find((h) => h.name === 'h')!.last_hour;
    expect([summed.calls[0], summed.calls[30], summed.errors[30]]).toEqual([1, 2, 1]);
    f.at(60 * 60_000);
    hour = f.tool('h', 'a').last_hour;
    expect([hour.calls[0], hour.calls[29]]).toEqual([0, 1]);
    // Two hours on, one more call: the hour and the minute hold it alone; since start holds all three.
    f.at(3 * 60 * 60_000 + 1);
    f.figures.callEnded('h', 'a', undefined, ...ran(1));
    const a = f.tool('h', 'a');
    expect(a.last_hour.calls.reduce((x, y) => x + y)).toBe(1);
    expect(a.last_hour.calls[59]).toBe(1);
    expect(a.last_hour.errors.every((n) => n === 0)).toBe(true);
    expect(a.last_minute.calls).toBe(1);
    expect(a.since_start.calls).toBe(3);
  });

  it('estimates p50 and p99 within the stated error of the nearest rank in the sorted durations', () => {
    const f = figuresAt(0);
    f.figures.deployed('h', ['a']);
    // A fixed pseudo-random spread over six orders of magnitude (0.02 ms to 20 s), log-uniform.
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (const n of [1, 2, 7, 100, 1_000]) {
      f.figures.forget('h');
      f.figures.deployed('h', ['a']);
      const durations: number[] = [];
      for (let i = 0; i < n; i++) {
        const ms = 0.02 * 10 ** (6 * next());
        durations.push(ms);
        f.figures.callEnded('h', 'a', undefined, ...ran(ms));
      }
      const sorted = [...durations].sort((x, y) => x - y);
      const rank = (q: number) => sorted[Math.max(1, Math.ceil(q * n)) - 1]!;
      const answer = f.figures.harness('h')!;
      const { p50_ms, p99_ms } = answer.tools[0]!.last_minute;
      expect(answer.percentile_error).toBeGreaterThan(0);
      expect(answer.percentile_error).toBeLessThan(0.1);
      for (const [estimate, exact] of [
        [p50_ms!, rank(0.5)],
        [p99_ms!, rank(0.99)],
      ] as const) {
        expect(Math.abs(estimate - exact) / exact, `${n} calls: ${estimate} for ${exact}`).toBeLessThanOrEqual(answer.percentile_error);
      }
      expect(answer.tools[0]!.since_start.p50_ms).toBe(p50_ms);
    }
  });

  it('keeps only deployed harnesses and their tools, and a replace keeps the tools it still has', () => {
    const f = figuresAt(0);
    f.figures.deployed('h', ['a', 'b']);
    f.figures.callEnded('h', 'a', undefined, ...ran(1));
    f.figures.callEnded('h', 'b', undefined, ...ran(1));
    // Names that are not deployed count nothing, and make no entry.
    f.figures.callEnded('other', 'a', undefined, ...ran(1));
    f.figures.callEnded('h', 'nothing', undefined, ...ran(1));
    f.figures.callEnded(undefined, undefined, 'unknown-tool');
    expect(f.figures.harness('other')).toBeUndefined();
    expect(f.figures.harness('h')!.tools.map((t) => t.name)).toEqual(['a', 'b']);
    const since = f.figures.harness('h')!.since;
    expect(since).toBe('2026-01-01T00:00:00.000Z');

    f.figures.deployed('h', ['b', 'c']);
    const replaced = f.figures.harness('h')!;
    expect(replaced.since).toBe(since);
    expect(replaced.tools.map((t) => [t.name, t.since_start.calls])).toEqual([
      ['b', 1],
      ['c', 0],
    ]);

    f.figures.forget('h');
    expect(f.figures.harness('h')).toBeUndefined();
    expect(f.figures.summary().harnesses).toEqual([]);
    // A call that was running when it went ends after: it brings nothing back.
    f.figures.callEnded('h', 'b', undefined, ...ran(1));
    expect(f.figures.harness('h')).toBeUndefined();
  });

  it('tells which harnesses moved: called since, or holding calls in a minute or hour that moved on', () => {
    const f = figuresAt(0);
    f.figures.deployed('quiet', ['a']);
    f.figures.deployed('busy', ['a']);
    f.figures.takeChanged();
    f.at(1_000);
    expect(f.figures.takeChanged()).toEqual([]);
    f.figures.callEnded('busy', 'a', undefined, ...ran(1));
    expect(f.figures.takeChanged()).toEqual(['busy']);
    // Nothing since, within the same slot.
    f.at(2_000);
    expect(f.figures.takeChanged()).toEqual([]);
    // A slot passed: its last minute moves while it holds the call.
    f.at(10_000);
    expect(f.figures.takeChanged()).toEqual(['busy']);
    f.at(12_000);
    expect(f.figures.takeChanged()).toEqual([]);
    // Past the minute and the slot after it, a slot passing changes nothing; a minute passing moves the hour.
    f.at(75_000);
    expect(f.figures.takeChanged()).toEqual(['busy']);
    f.at(85_000);
    expect(f.figures.takeChanged()).toEqual([]);
    // Once the hour no longer holds it, nothing moves.
    f.at(62 * 60_000);
    expect(f.figures.takeChanged()).toEqual([]);
  });
});
