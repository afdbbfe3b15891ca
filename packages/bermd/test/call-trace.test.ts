// What the tool runtime tells a call's trace, on real worker threads running a berm.call chain of relays
// compiled from WAT: a sampled trace hears of each instance made and each nested call entered and left,
// with the worker's times; an unsampled one hears only that the call started and ended, its worker
// posting nothing for it.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallTrace, ToolRunner } from '../dist/runtime/index.js';
import { relayImage, type GuestImage } from '../../../test/helpers/guest.js';

async function deploy(runner: ToolRunner, name: string, image: GuestImage): Promise<void> {
  const module = await runner.compile(image.bytes);
  const digest = `sha256:${createHash('sha256').update(image.bytes).digest('hex')}`;
  runner.setHarness(name, { module, manifest: image.manifest, digest });
}

/** A trace that writes down what it is told, in order. */
function recorder(sampled: boolean): CallTrace & { heard: string[] } {
  const heard: string[] = [];
  return {
    sampled,
    heard,
    started: () => heard.push('started'),
    instantiated: (harness, tool, depth, from, to) => {
      expect(to).toBeGreaterThanOrEqual(from);
      heard.push(`instantiated ${harness}.${tool} ${depth}`);
    },
    entered: (harness, tool, depth) => heard.push(`entered ${harness}.${tool} ${depth}`),
    left: (depth) => heard.push(`left ${depth}`),
    host: () => {
      throw new Error('no host call is made');
    },
    ended: (error) => heard.push(error === undefined ? 'ended' : `ended ${error.code}`),
  };
}

describe("what a call's trace is told", () => {
  const runner = new ToolRunner({ threads: { min: 1, max: 2 } });

  beforeAll(async () => {
    await deploy(runner, 'a', await relayImage(['b']));
    await deploy(runner, 'b', await relayImage());
  });

  afterAll(async () => {
    await runner.close();
  });

  it('tells a sampled trace of every instance and nested call, and an unsampled one only its start and end', async () => {
    const args = { program: 'b', tool: 'forecast', args: { days: 1 } };
    const sampled = recorder(true);
    expect('ok' in (await runner.call('a', 'call', args, { trace: sampled }))).toBe(true);
    expect(sampled.heard).toEqual([
      'started',
      'instantiated a.call 0',
      'entered b.forecast 1',
      'instantiated b.forecast 1',
      'left 1',
      'ended',
    ]);

    const unsampled = recorder(false);
    expect('ok' in (await runner.call('a', 'call', args, { trace: unsampled }))).toBe(true);
    expect(unsampled.heard).toEqual(['started', 'ended']);
  });
});
