// Host calls served on the main thread (berm.http.fetch, berm.http.proxy): the tool runtime with services
// a test controls, so when a service answers is the test's choice, not the clock's.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolRunner, type CallOutcome, type HostService, type HostServiceCall } from '../dist/runtime/index.js';
import { basicImage, httpImage, type GuestImage } from '../../../test/helpers/guest.js';
import { stoppedAt } from '../../../test/helpers/timeouts.js';

function deploy(
  runner: ToolRunner,
  name: string,
  image: GuestImage,
  extra: { context?: unknown; limits?: { callTimeoutMs?: number } } = {},
): Promise<void> {
  return runner.compile(image.bytes).then((module) => {
    const digest = `sha256:${createHash('sha256').update(image.bytes).digest('hex')}`;
    runner.setHarness(name, { module, manifest: image.manifest, digest, ...extra });
  });
}

function ok(outcome: CallOutcome): unknown {
  if (!('ok' in outcome)) throw new Error(`expected ok, got ${JSON.stringify(outcome.error)}`);
  return outcome.ok;
}

/** A service that records its calls and answers each when the test says so. */
class ControlledService {
  readonly calls: HostServiceCall[] = [];
  private readonly pending: Array<(envelope: unknown) => void> = [];
  private readonly waiters: Array<() => void> = [];

  readonly serve: HostService = (call) => {
    this.calls.push(call);
    for (const w of this.waiters.splice(0)) w();
    return new Promise((resolve) => this.pending.push(resolve as (envelope: unknown) => void));
  };

  /** Resolves once `count` calls have arrived. */
  async reached(count: number): Promise<void> {
    while (this.calls.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  answer(envelope: unknown): void {
    this.pending.shift()!(envelope);
  }
}

describe('host calls served on the main thread', () => {
  const service = new ControlledService();
  const runner = new ToolRunner({
    threads: { min: 2, max: 2 },
    callTimeoutMs: 30_000,
    hostServices: new Map<string, HostService>([['berm.http.fetch', service.serve]]),
  });

  beforeAll(async () => {
    await deploy(runner, 'front', await httpImage({ programs: ['back'] }), { context: { who: 'front' } });
    await deploy(runner, 'back', await httpImage({ fetch: ['api.example.com'] }), { context: { who: 'back' } });
    await deploy(runner, 'proxied', await httpImage({ proxy: ['api.example.com'] }));
    await deploy(runner, 'quick', await httpImage({ fetch: ['api.example.com'] }), { limits: { callTimeoutMs: 2000 } });
    await deploy(runner, 'basic', await basicImage());
  });
  afterAll(() => runner.close());

  it('blocks only its guest until the service answers, then hands the guest the envelope', async () => {
    const request = { url: 'http://api.example.com/x', headers: { a: 'b' } };
    const blocked = runner.call('back', 'fetch', request);
    await service.reached(1);
    // The guest waits in its host call; another call runs on the other worker meanwhile.
    expect(ok(await runner.call('basic', 'echo', { meanwhile: true }))).toEqual({ meanwhile: true });
    const call = service.calls[0]!;
    expect({
      name: call.name,
      harness: call.harness,
      tool: call.tool,
      entry: call.entry,
      context: call.context,
      request: call.request,
    }).toEqual({
      name: 'berm.http.fetch',
      harness: 'back',
      tool: 'fetch',
      entry: 'back',
      context: { who: 'back' },
      request,
    });
    expect(call.signal.aborted).toBe(false);
    service.answer({ ok: { status: 204, headers: {}, body: '' } });
    expect(ok(await blocked)).toEqual({ ok: { status: 204, headers: {}, body: '' } });
  });

  it("tells the service which harness a chain entered through, and gives it the calling harness's context", async () => {
    const done = runner.call('front', 'call', { program: 'back', tool: 'fetch', args: { url: 'http://api.example.com/' } });
    await service.reached(2);
    const call = service.calls[1]!;
    expect([call.harness, call.entry, call.context]).toEqual(['back', 'front', { who: 'back' }]);
    service.answer({ refused: 'no' });
    expect(ok(await done)).toEqual({ ok: { refused: 'no' } });
  });

  it("refuses a host call without a service, and aborts the service's signal when the call times out", async () => {
    expect(ok(await runner.call('proxied', 'proxy', { url: 'http://api.example.com/' }))).toEqual({
      refused: 'berm.http.proxy is not served by this host',
    });

    const timing = runner.call('quick', 'fetch', { url: 'http://api.example.com/' });
    await service.reached(3);
    const { signal } = service.calls[2]!;
    const outcome = await timing;
    expect('error' in outcome && outcome.error).toEqual({
      code: 'timeout',
      message: expect.stringMatching(stoppedAt('quick.fetch', 2000)),
    });
    expect(signal.aborted).toBe(true);
    // The worker was terminated; the runner keeps serving.
    expect(ok(await runner.call('basic', 'echo', { after: 1 }))).toEqual({ after: 1 });
  });
});

describe('a service that fails', () => {
  const runner = new ToolRunner({
    threads: 1,
    hostServices: new Map<string, HostService>([['berm.http.fetch', () => Promise.reject(new Error('the network is down'))]]),
  });
  afterAll(() => runner.close());

  it('answers the guest {"failed": ...}', async () => {
    await deploy(runner, 'back', await httpImage({ fetch: ['api.example.com'] }));
    expect(ok(await runner.call('back', 'fetch', { url: 'http://api.example.com/' }))).toEqual({
      failed: 'berm.http.fetch failed in the host: the network is down',
    });
  });
});
