// Who gets the next worker: the fair queue on its own (which calls start, in what order), then the
// runner on real worker threads, where a harness at its limit must leave workers to the others.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FairQueue, type Turn } from '../dist/runtime/fair-queue.js';
import { ToolRunner, type CallOutcome, type GuestReport } from '../dist/runtime/index.js';
import { SPIN_LOG, basicImage, relayImage, type GuestImage } from '../../../test/helpers/guest.js';

/** A queue whose calls record the order they start in. */
function recording(workers: number, maxQueue: number) {
  const queue = new FairQueue(workers, maxQueue);
  const started: string[] = [];
  const turns = new Map<string, Turn>();
  const enter = (harness: string, id: string, limit = workers): Turn | undefined => {
    const turn = queue.enter(harness, limit, () => started.push(id));
    if (turn !== undefined) turns.set(id, turn);
    return turn;
  };
  const leave = (id: string): void => turns.get(id)!.leave();
  return { queue, started, enter, leave };
}

describe('the fair queue', () => {
  it('runs at most a harness’s limit, and at most the workers in all', () => {
    const q = recording(3, 10);
    for (const id of ['a1', 'a2', 'a3']) q.enter('a', id, 2);
    q.enter('b', 'b1', 2);
    q.enter('c', 'c1', 2);
    expect(q.started).toEqual(['a1', 'a2', 'b1']);
    expect([q.queue.active, q.queue.queued]).toEqual([3, 2]);
    // a3 waits for its harness's limit even while a worker is free.
    q.leave('b1');
    expect(q.started).toEqual(['a1', 'a2', 'b1', 'c1']);
    q.leave('a1');
    expect(q.started.at(-1)).toBe('a3');
    expect([q.queue.active, q.queue.queued]).toEqual([3, 0]);
  });

  it('hands freed workers to harnesses in turn, first come first served within one', () => {
    const q = recording(1, 10);
    q.enter('hog', 'hog0');
    for (const id of ['hog1', 'hog2', 'hog3', 'hog4']) q.enter('hog', id);
    q.enter('b', 'b1');
    q.enter('b', 'b2');
    q.enter('c', 'c1');
    let last = 'hog0';
    for (let i = 0; i < 7; i++) {
      q.leave(last);
      last = q.started.at(-1)!;
    }
    expect(q.started).toEqual(['hog0', 'hog1', 'b1', 'c1', 'hog2', 'b2', 'hog3', 'hog4']);
  });

  it('refuses a call past its harness’s line, and not another harness’s', () => {
    const q = recording(1, 2);
    expect(q.enter('a', 'a0')?.started).toBe(true);
    expect(q.enter('a', 'a1')?.ahead).toBe(0);
    expect(q.enter('a', 'a2')?.ahead).toBe(1);
    expect(q.enter('a', 'a3')).toBeUndefined();
    expect(q.enter('b', 'b1')?.started).toBe(false);
    expect(q.queue.queued).toBe(3);
  });

  it('lets a waiting call leave its line, once, without starting anything', () => {
    const q = recording(1, 5);
    q.enter('a', 'a0');
    q.enter('a', 'a1');
    q.enter('a', 'a2');
    q.leave('a1');
    q.leave('a1');
    expect(q.queue.queued).toBe(1);
    q.leave('a0');
    q.leave('a0');
    expect(q.started).toEqual(['a0', 'a2']);
    expect(q.queue.active).toBe(1);
    q.leave('a2');
    expect([q.queue.active, q.queue.queued]).toEqual([0, 0]);
  });
});

async function deploy(runner: ToolRunner, name: string, image: GuestImage, limits: { callTimeoutMs?: number } = {}): Promise<void> {
  const module = await runner.compile(image.bytes);
  const digest = `sha256:${createHash('sha256').update(image.bytes).digest('hex')}`;
  runner.setHarness(name, { module, manifest: image.manifest, digest, limits });
}

function ok(outcome: CallOutcome): unknown {
  if (!('ok' in outcome)) throw new Error(`expected ok, got ${JSON.stringify(outcome.error)}`);
  return outcome.ok;
}

function failed(outcome: CallOutcome): { code: string; message: string } {
  if (!('error' in outcome)) throw new Error(`expected an error, got ok ${JSON.stringify(outcome.ok)}`);
  return outcome.error;
}

/** A runner whose `spinning(n)` resolves once n calls have logged that they spin. */
function spinRunner(options: ConstructorParameters<typeof ToolRunner>[0]) {
  const spins: GuestReport[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const runner = new ToolRunner({
    ...options,
    onReport: (report) => {
      if (report.kind !== 'log' || report.message !== SPIN_LOG.message) return;
      spins.push(report);
      for (const w of waiters.filter((w) => spins.length >= w.n)) w.resolve();
    },
  });
  const spinning = (n: number): Promise<void> =>
    spins.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }));
  return { runner, spins, spinning };
}

describe('the runner’s fair sharing', () => {
  it('leaves workers to other harnesses while one runs at its limit, and its next call waits its turn', async () => {
    const { runner, spins, spinning } = spinRunner({ threads: 2, maxConcurrency: 1, callTimeoutMs: 120_000 });
    try {
      await deploy(runner, 'relay', await relayImage());
      await deploy(runner, 'basic', await basicImage());
      const first = new AbortController();
      const running = runner.call('relay', 'spin', {}, { signal: first.signal });
      await spinning(1);
      const second = new AbortController();
      const waiting = runner.call('relay', 'spin', {}, { signal: second.signal });
      const others = await Promise.all(Array.from({ length: 20 }, (_, i) => runner.call('basic', 'echo', { i })));
      expect(others.map(ok)).toEqual(Array.from({ length: 20 }, (_, i) => ({ i })));
      second.abort();
      expect(failed(await waiting)).toEqual({
        code: 'cancelled',
        message: 'relay.spin was cancelled while it waited for a worker; it never ran',
      });
      expect(spins).toHaveLength(1);
      first.abort();
      expect(failed(await running).code).toBe('cancelled');
    } finally {
      await runner.close();
    }
  });

  it('counts the wait against the time limit: a call that times out waiting never runs and says so', async () => {
    const { runner, spins, spinning } = spinRunner({ threads: 2, maxConcurrency: 1, callTimeoutMs: 120_000 });
    try {
      const relay = await relayImage();
      await deploy(runner, 'relay', relay);
      const first = new AbortController();
      const running = runner.call('relay', 'spin', {}, { signal: first.signal });
      await spinning(1);
      // Redeployed with a short limit: the call running keeps its own, the next one has 200 ms in all.
      await deploy(runner, 'relay', relay, { callTimeoutMs: 200 });
      const late = failed(await runner.call('relay', 'spin', {}));
      expect(late.code).toBe('timeout');
      expect(late.message).toMatch(
        /^relay\.spin waited \d+ ms for a worker, its whole time limit of 200 ms, and never ran \(relay runs at most 1 call at once; 0 of its calls were waiting ahead of this one\)$/,
      );
      expect(spins).toHaveLength(1);
      first.abort();
      expect(failed(await running).code).toBe('cancelled');
    } finally {
      await runner.close();
    }
  });

  it('refuses a call at once when its harness’s line is full, and nothing runs', async () => {
    const { runner, spins, spinning } = spinRunner({ threads: 2, maxConcurrency: 1, maxQueue: 2, callTimeoutMs: 120_000 });
    try {
      await deploy(runner, 'relay', await relayImage());
      await deploy(runner, 'basic', await basicImage());
      const stop = new AbortController();
      const calls = [runner.call('relay', 'spin', {}, { signal: stop.signal })];
      await spinning(1);
      calls.push(runner.call('relay', 'spin', {}, { signal: stop.signal }), runner.call('relay', 'spin', {}, { signal: stop.signal }));
      const refused = await runner.call('relay', 'spin', {});
      expect(failed(refused)).toEqual({
        code: 'busy',
        message: 'bermd is busy: 2 calls of relay are already waiting for a worker (--max-queue); relay.spin did not run',
      });
      expect(refused.reached.tools).toEqual([]);
      // Another harness's line is its own.
      expect(ok(await runner.call('basic', 'echo', { free: true }))).toEqual({ free: true });
      stop.abort();
      expect((await Promise.all(calls)).map((o) => failed(o).code)).toEqual(['cancelled', 'cancelled', 'cancelled']);
      expect(spins).toHaveLength(1);
    } finally {
      await runner.close();
    }
  });

  it('counts a nested berm.call against the harness it entered through, never the one it reaches', async () => {
    const { runner, spinning } = spinRunner({ threads: 2, maxConcurrency: 1, callTimeoutMs: 120_000 });
    try {
      await deploy(runner, 'relay', await relayImage());
      await deploy(runner, 'caller', await relayImage(['relay']));
      const stop = new AbortController();
      const running = runner.call('relay', 'spin', {}, { signal: stop.signal });
      await spinning(1);
      // relay is at its limit, yet a call entering through caller reaches it, on caller's worker.
      const nested = await runner.call('caller', 'call', { program: 'relay', tool: 'forecast', args: { days: 2 } });
      expect(ok(nested)).toEqual({ ok: { days: 2 } });
      expect(nested.reached.tools).toEqual([
        { harness: 'caller', tool: 'call' },
        { harness: 'relay', tool: 'forecast' },
      ]);
      // And a call nesting into its own harness does not wait for itself.
      expect(ok(await runner.call('caller', 'call', { program: 'caller', tool: 'forecast', args: { days: 3 } }))).toEqual({
        ok: { days: 3 },
      });
      stop.abort();
      await running;
    } finally {
      await runner.close();
    }
  });

  it('sizes its pool above the per-harness limit unless told otherwise', async () => {
    const runner = new ToolRunner({ maxConcurrency: 2 });
    try {
      expect(runner.workers).toBeGreaterThan(2);
      expect(runner.maxConcurrency).toBe(2);
    } finally {
      await runner.close();
    }
    const tight = new ToolRunner({ maxConcurrency: 4, threads: 2 });
    try {
      expect([tight.workers, tight.maxConcurrency]).toEqual([2, 2]);
    } finally {
      await tight.close();
    }
  });
});
