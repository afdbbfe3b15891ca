// A runner made inline runs a call on its own thread (src/runtime/inline.ts) as a worker runs it: every
// case here is called on an inline runner and on one that runs every call on workers, and the two must
// answer alike, outcome, logs and events; guests compiled from WAT by V8.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallOutcome, type GuestReport, type HarnessLimits, type RunnerOptions, ToolRunner } from '../dist/runtime/index.js';
import { basicImage, hostileImage, httpImage, relayImage, type GuestImage } from '../../../test/helpers/guest.js';
import { stoppedAt } from '../../../test/helpers/timeouts.js';

interface Recorded {
  runner: ToolRunner;
  reports: GuestReport[];
}

function recording(options: RunnerOptions): Recorded {
  const reports: GuestReport[] = [];
  const runner = new ToolRunner({ threads: { min: 1, max: 2 }, maxResultBytes: 4096, ...options, onReport: (r) => reports.push(r) });
  return { runner, reports };
}

async function deploy(runner: ToolRunner, name: string, image: GuestImage, limits?: HarnessLimits): Promise<void> {
  const module = await runner.compile(image.bytes);
  const digest = `sha256:${createHash('sha256').update(image.bytes).digest('hex')}`;
  runner.setHarness(name, { module, manifest: image.manifest, digest, limits });
}

/** A call on a runner, with the reports it made. */
async function callOn(
  r: Recorded,
  harness: string,
  tool: string,
  args: unknown,
): Promise<{ outcome: CallOutcome; reports: GuestReport[] }> {
  const before = r.reports.length;
  const outcome = await r.runner.call(harness, tool, args);
  return { outcome, reports: r.reports.slice(before) };
}

const onWorkers = recording({});
const inline = recording({ inline: true });
const both = [onWorkers, inline];

beforeAll(async () => {
  const [basic, relay, hostile, http] = await Promise.all([
    basicImage({ maxPages: 32 }),
    relayImage(['basic', 'relay2', 'ghost']),
    hostileImage('basic'),
    httpImage({ fetch: ['example.com'] }),
  ]);
  for (const { runner } of both) {
    await deploy(runner, 'basic', basic);
    await deploy(runner, 'relay', relay);
    await deploy(runner, 'relay2', relay);
    // The runaways have the short limit; the others the runner's, which no case here comes near.
    await deploy(runner, 'slow', relay, { callTimeoutMs: 300 });
    await deploy(runner, 'hostile', hostile, { callTimeoutMs: 300 });
    await deploy(runner, 'http', http);
  }
});

afterAll(() => Promise.all(both.map(({ runner }) => runner.close())));

describe('an inline runner answers as its workers do', () => {
  const cases: Array<[string, string, string, unknown]> = [
    ['an answer', 'basic', 'echo', { text: 'héllo', n: [1, 2] }],
    ["the guest's own error", 'basic', 'fail', {}],
    ['a trap', 'basic', 'trap', {}],
    ['a result that is not an envelope', 'basic', 'raw', { nope: 1 }],
    ['a result that is not UTF-8', 'basic', 'garbage', {}],
    ['a result above the limit', 'basic', 'huge', {}],
    ['memory grown to its maximum', 'basic', 'grow', {}],
    ['memory taken until it is refused', 'hostile', 'hog', {}],
    ['a stack that runs out', 'hostile', 'recurse', {}],
    ['arguments that do not fit', 'relay', 'forecast', { days: 'soon' }],
    ['a log line', 'relay', 'log', { level: 'info', message: 'inline' }],
    ['logs past the budget', 'relay', 'log_twice', { level: 'info', message: 'x'.repeat(2000) }],
    ['an event', 'relay', 'emit', { event: 'reading', fields: { celsius: 21.5 } }],
    ['an event that does not fit', 'relay', 'emit', { event: 'reading', fields: { celsius: 'warm' } }],
    [
      'a chain through two programs',
      'relay',
      'call',
      { program: 'relay2', tool: 'call', args: { program: 'basic', tool: 'echo', args: { x: 1 } } },
    ],
    ['a chain bounded at the depth limit', 'relay', 'chain', { program: 'relay' }],
    ['a program not deployed', 'relay', 'call', { program: 'ghost', tool: 'echo', args: {} }],
  ];

  it.each(cases)('%s', async (_, harness, tool, args) => {
    const [expected, got] = await Promise.all(both.map((r) => callOn(r, harness, tool, args)));
    expect(got).toEqual(expected);
  });

  it('stops a runaway at its time limit with the same code and words, nested or not, and serves calls after', async () => {
    for (const { runner } of both) {
      const stopped = await runner.call('slow', 'spin', {});
      expect(stopped).toMatchObject({ error: { code: 'timeout', message: expect.stringMatching(stoppedAt('slow.spin', 300)) } });
      const nested = await runner.call('slow', 'call', { program: 'slow', tool: 'spin', args: {} });
      expect(nested).toMatchObject({ error: { code: 'timeout', message: expect.stringMatching(stoppedAt('slow.call', 300)) } });
      expect(await runner.call('basic', 'echo', { after: 'timeouts' })).toMatchObject({ ok: { after: 'timeouts' } });
    }
  });

  it('says a flood of logs went on past its budget when it stops it', async () => {
    const spent = '; it had sent its 4096 bytes of logs and events, and went on sending after they were refused';
    const [expected, got] = await Promise.all(both.map((r) => callOn(r, 'hostile', 'log_flood', {})));
    expect(got.outcome).toMatchObject({
      error: { code: 'timeout', message: expect.stringMatching(stoppedAt('hostile.log_flood', 300, spent)) },
    });
    expect(got.reports).toEqual(expected.reports);
  });
});

describe('where an inline runner runs a call', () => {
  it('starts no thread for calls that need none, and one for a call that reaches a host call served off the thread', async () => {
    const fresh = recording({ inline: true });
    try {
      await deploy(fresh.runner, 'basic', await basicImage());
      await deploy(fresh.runner, 'http', await httpImage({ fetch: ['example.com'] }));
      expect(await fresh.runner.call('basic', 'echo', { n: 1 })).toMatchObject({ ok: { n: 1 } });
      expect(fresh.runner.liveThreads).toBe(0);
      const request = { method: 'GET', url: 'https://example.com/' };
      const [expected, got] = await Promise.all([onWorkers, fresh].map((r) => callOn(r, 'http', 'fetch', request)));
      expect(got).toEqual(expected);
      expect(got.outcome).toMatchObject({ ok: { refused: expect.stringContaining('berm.http.fetch') } });
      expect(fresh.runner.liveThreads).toBe(1);
    } finally {
      await fresh.runner.close();
    }
    expect(fresh.runner.liveThreads).toBe(0);
  });
});
