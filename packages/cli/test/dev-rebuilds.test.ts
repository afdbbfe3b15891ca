// When crab dev builds: saves within the debounce window make one build, and a build never overlaps
// another; saves during a build queue exactly one more. The clock is vitest's, so that the window is
// what the test says it is, and each build ends when the test resolves it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Rebuilds } from '../dist/dev/rebuilds.js';

/** A build the test ends: each call is recorded, and stays under way until `finish` is called. */
function builds() {
  const started: { finish: () => void }[] = [];
  let running = 0;
  let most = 0;
  const build = (): Promise<void> =>
    new Promise<void>((resolve) => {
      running++;
      most = Math.max(most, running);
      started.push({
        finish: () => {
          running--;
          resolve();
        },
      });
    });
  return { build, started, most: () => most };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Rebuilds', () => {
  it('makes one build of saves that come within the window, and none before the window has passed', async () => {
    const b = builds();
    const rebuilds = new Rebuilds(b.build, 200, () => {});
    rebuilds.touch();
    await vi.advanceTimersByTimeAsync(150);
    rebuilds.touch();
    await vi.advanceTimersByTimeAsync(150);
    rebuilds.touch();
    await vi.advanceTimersByTimeAsync(199);
    expect(b.started).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(b.started).toHaveLength(1);
    b.started[0]!.finish();
    await rebuilds.close();
    expect(b.started).toHaveLength(1);
  });

  it('queues exactly one more build for any number of saves during a build, started when it ends', async () => {
    const b = builds();
    const rebuilds = new Rebuilds(b.build, 100, () => {});
    rebuilds.now();
    expect(b.started).toHaveLength(1);
    for (let i = 0; i < 5; i++) {
      rebuilds.touch();
      await vi.advanceTimersByTimeAsync(500);
    }
    expect(b.started).toHaveLength(1);
    expect(rebuilds.busy).toBe(true);
    b.started[0]!.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(b.started).toHaveLength(2);
    b.started[1]!.finish();
    await vi.advanceTimersByTimeAsync(1000);
    expect(b.started).toHaveLength(2);
    expect(b.most()).toBe(1);
    await rebuilds.close();
  });

  it('goes on after a build that fails, reporting what it threw', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const rebuilds = new Rebuilds(
      async () => {
        calls++;
        if (calls === 1) throw new Error('no daemon');
      },
      50,
      (e) => errors.push(e),
    );
    rebuilds.now();
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toEqual([new Error('no daemon')]);
    rebuilds.touch();
    await vi.advanceTimersByTimeAsync(50);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
    await rebuilds.close();
  });

  it('on close, drops the window and the queued build, and waits for the build under way', async () => {
    const b = builds();
    const rebuilds = new Rebuilds(b.build, 100, () => {});
    rebuilds.now();
    rebuilds.touch();
    await vi.advanceTimersByTimeAsync(100);
    let closed = false;
    const closing = rebuilds.close().then(() => (closed = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(closed).toBe(false);
    b.started[0]!.finish();
    await closing;
    rebuilds.touch();
    await vi.advanceTimersByTimeAsync(1000);
    expect(b.started).toHaveLength(1);
  });
});
