// The embedded runtime on worker threads started ahead of it (`startWorkers`, as `crab run` starts its
// one before it imports the runtime): a call on them answers as on threads the runtime starts itself,
// under the same limits (time, result size, memory), with no thread started beside them; and `open`
// refusing an image, or a syscall to serve, ends them, so no thread is left running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicImage, relayImage, type GuestImage } from '../../../test/helpers/guest.js';
import { threadCount } from '../../../test/helpers/threads.js';
import { stoppedAt } from '../../../test/helpers/timeouts.js';

// The package's entry, as `crab run` loads it (the bundle, once built).
const entry = new URL('../dist/embedded/entry.js', import.meta.url).href;
type Entry = typeof import('../dist/embedded/index.js');

let runtimeEntry: Entry;
let basic: GuestImage;
let relay: GuestImage;

beforeAll(async () => {
  runtimeEntry = (await import(entry)) as Entry;
  [basic, relay] = await Promise.all([basicImage(), relayImage()]);
});

/** What a call came to: the tool's answer (an error answer included), or the refusal's code and words. */
async function outcome(
  runtime: Awaited<ReturnType<Entry['EmbeddedRuntime']['open']>>,
  harness: string,
  tool: string,
  args: unknown = {},
): Promise<{ answer: unknown } | { refused: { code: string; message: string } }> {
  try {
    return { answer: await runtime.call(harness, tool, args) };
  } catch (e) {
    const { code, message } = e as { code: string; message: string };
    return { refused: { code, message } };
  }
}

/** Each call's outcome on a runtime given threads started ahead, and on one that starts its own. */
async function both(
  images: { name: string; bytes: Uint8Array }[],
  limits: Record<string, number>,
  calls: Array<[string, string, unknown?]>,
): Promise<{ ahead: unknown[]; own: unknown[] }> {
  const run = async (ahead: boolean) => {
    const runtime = await runtimeEntry.EmbeddedRuntime.open(images, {
      limits,
      workers: ahead ? runtimeEntry.startWorkers(1) : undefined,
    });
    try {
      const out: unknown[] = [];
      for (const [harness, tool, args] of calls) out.push(await outcome(runtime, harness, tool, args));
      return out;
    } finally {
      await runtime.close();
    }
  };
  return { ahead: await run(true), own: await run(false) };
}

describe('the embedded runtime on workers started ahead', () => {
  describe.skipIf(threadCount() === undefined)('threads', () => {
    // First, so that no thread of an earlier test's is still ending while these count.
    let before: number;
    beforeAll(() => {
      before = threadCount()!;
    });
    afterAll(() => {
      expect(threadCount()).toBe(before);
    });

    it('runs its calls on them, starting none of its own, and ends them when it closes', async () => {
      const workers = runtimeEntry.startWorkers(1);
      expect(threadCount()).toBe(before + 1);
      const runtime = await runtimeEntry.EmbeddedRuntime.open([{ name: 'basic', bytes: basic.bytes }], { workers });
      try {
        expect(await outcome(runtime, 'basic', 'echo', { text: 'hi' })).toMatchObject({ answer: { is_error: false } });
        expect(threadCount()).toBe(before + 1);
      } finally {
        await runtime.close();
      }
      expect(threadCount()).toBe(before);
    });

    it('ends them when it refuses an image, with the refusal a deploy gives', async () => {
      const workers = runtimeEntry.startWorkers(1);
      const notWasm = new TextEncoder().encode('not an image');
      const refused = await runtimeEntry.EmbeddedRuntime.open([{ name: 'bad', bytes: notWasm }], { workers }).catch((e: unknown) => e);
      expect(runtimeEntry.isBermdError(refused)).toBe(true);
      const own = await runtimeEntry.EmbeddedRuntime.open([{ name: 'bad', bytes: notWasm }]).catch((e: unknown) => e);
      expect({ ...(refused as object), message: (refused as Error).message }).toEqual({
        ...(own as object),
        message: (own as Error).message,
      });
      expect(threadCount()).toBe(before);
    });

    it('ends them when it refuses a syscall to serve, before it is made', async () => {
      const workers = runtimeEntry.startWorkers(1);
      await expect(
        runtimeEntry.EmbeddedRuntime.open([{ name: 'basic', bytes: basic.bytes }], { workers, serve: ['berm.nothing'] }),
      ).rejects.toThrow('berm.nothing cannot be served');
      expect(threadCount()).toBe(before);
    });
  });

  it('stops a call at its time limit, as on the workers it starts itself', async () => {
    const { ahead, own } = await both([{ name: 'relay', bytes: relay.bytes }], { timeout: 300 }, [['relay', 'spin']]);
    // Only the time the call waited for a worker may differ (a thread the runtime starts itself is not
    // ready at once): the message says so in a clause of its own.
    const waitless = (outcomes: unknown[]) => JSON.parse(JSON.stringify(outcomes).replace(/, \d+ ms of it waiting for a worker,/g, ''));
    expect(waitless(ahead)).toEqual(waitless(own));
    expect(ahead[0]).toEqual({ refused: { code: 'timeout', message: expect.stringMatching(stoppedAt('relay.spin', 300)) } });
  });

  it('holds a result to the result limit, as on the workers it starts itself', async () => {
    const { ahead, own } = await both([{ name: 'basic', bytes: basic.bytes }], { max_result_size: 4096 }, [
      ['basic', 'huge'],
      ['basic', 'echo'],
    ]);
    expect(ahead).toEqual(own);
    expect(ahead[0]).toEqual({
      refused: { code: 'result-too-large', message: 'basic.huge returned 1572873 bytes, above the limit of 4096' },
    });
    expect(ahead[1]).toMatchObject({ answer: { is_error: false } });
  });

  it('holds memory to the memory cap, as on the workers it starts itself', async () => {
    const { ahead, own } = await both([{ name: 'basic', bytes: basic.bytes }], { max_memory: 2 * 65536 }, [['basic', 'grow']]);
    expect(ahead).toEqual(own);
    expect(ahead[0]).toMatchObject({ answer: { is_error: false, content: [{ text: '{"pages":2}' }] } });
  });
});
