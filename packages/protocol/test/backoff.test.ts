// The one doubling retry bermd's store and `berm mcp` share: the delays it gives, and where a deadline ends them.
import { describe, expect, it } from 'vitest';
import { backoff } from '../dist/index.js';

describe('backoff', () => {
  it('starts at the first delay and doubles up to the cap, where it stays', () => {
    const policy = { firstMs: 250, maxMs: 5000 };
    const delays = Array.from({ length: 8 }, (_, attempt) => backoff(attempt, policy));
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });

  it('stays finite and capped however many attempts came before (a first delay of 0 stays 0)', () => {
    expect(backoff(5000, { firstMs: 3, maxMs: 7000 })).toBe(7000);
    expect(backoff(5000, { firstMs: 0, maxMs: 7000 })).toBe(0);
    expect(backoff(-1, { firstMs: 250, maxMs: 7000 })).toBe(250);
  });

  it('with a deadline, waits no longer than what is left, and answers null once nothing is', () => {
    const policy = { firstMs: 250, maxMs: 2000 };
    expect(backoff(3, policy, 10_000)).toBe(2000);
    expect(backoff(3, policy, 1500)).toBe(1500);
    expect(backoff(0, policy, 1)).toBe(1);
    expect(backoff(0, policy, 0)).toBeNull();
    expect(backoff(2, policy, -40)).toBeNull();
  });
});
