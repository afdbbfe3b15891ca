// The tool runtime end to end: guests compiled from WAT by V8, run on real worker threads.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ToolRunner,
  capMemory,
  RunnerError,
  type CallOutcome,
  type GuestReport,
  type HarnessLimits,
  type RunnerOptions,
} from '../dist/runtime/index.js';
import {
  FAIL_MESSAGE,
  FORECAST_LOG,
  HUGE_RESULT_CHARS,
  SPIN_LOG,
  basicImage,
  basicManifest,
  basicWat,
  relayImage,
  type GuestImage,
} from '../../../test/helpers/guest.js';
import { buildImage, sampleManifest, wat2wasm } from '../../../test/helpers/wat.js';
import { stoppedAt } from '../../../test/helpers/timeouts.js';

const MiB = 1024 * 1024;

/** A `berm.log` line as the tests compare it: its report without the kind. */
type LogLine = Omit<Extract<GuestReport, { kind: 'log' }>, 'kind'>;

function lineOf({ harness, tool, level, message }: Extract<GuestReport, { kind: 'log' }>): LogLine {
  return { harness, tool, level, message };
}

interface Recorder {
  logs: LogLine[];
  events: Array<{ harness: string; event: string; fields: unknown }>;
}

function recordingRunner(options: RunnerOptions = {}): { runner: ToolRunner } & Recorder {
  const logs: LogLine[] = [];
  const events: Recorder['events'] = [];
  const runner = new ToolRunner({
    threads: { min: 1, max: 2 },
    ...options,
    onReport: (report) => {
      switch (report.kind) {
        case 'log':
          logs.push(lineOf(report));
          break;
        case 'event':
          events.push({ harness: report.harness, event: report.event, fields: report.fields });
          break;
      }
    },
  });
  return { runner, logs, events };
}

async function deploy(runner: ToolRunner, name: string, image: GuestImage, limits?: HarnessLimits): Promise<void> {
  const module = await runner.compile(image.bytes);
  const digest = `sha256:${createHash('sha256').update(image.bytes).digest('hex')}`;
  runner.setHarness(name, { module, manifest: image.manifest, digest, limits });
}

function ok(outcome: CallOutcome): unknown {
  if (!('ok' in outcome)) throw new Error(`expected ok, got ${JSON.stringify(outcome.error)}`);
  return outcome.ok;
}

function failed(outcome: CallOutcome): { code: string; message: string; path?: string } {
  if (!('error' in outcome)) throw new Error(`expected an error, got ok ${JSON.stringify(outcome.ok)}`);
  return outcome.error;
}

let basic: GuestImage;
let relay: GuestImage;

beforeAll(async () => {
  basic = await basicImage();
  // The relay may call "basic" and "ghost" (never deployed); "other" is deployed but not declared.
  relay = await relayImage(['basic', 'ghost', 'relay2']);
});

describe('calls that end in the guest', () => {
  const r = recordingRunner();
  beforeAll(async () => {
    await deploy(r.runner, 'basic', basic);
    await deploy(r.runner, 'relay', relay);
  });
  afterAll(() => r.runner.close());

  it("answers a tool's ok value and reports the tool as reached", async () => {
    const outcome = await r.runner.call('basic', 'echo', { text: 'héllo', n: [1, 2] });
    expect(ok(outcome)).toEqual({ text: 'héllo', n: [1, 2] });
    expect(outcome.reached).toEqual({ tools: [{ harness: 'basic', tool: 'echo' }], events: [] });
  });

  it('treats missing arguments as an empty object', async () => {
    expect(ok(await r.runner.call('basic', 'echo', undefined))).toEqual({});
  });

  it('answers a guest {"error"} as guest-error with its message', async () => {
    expect(failed(await r.runner.call('basic', 'fail', {}))).toEqual({ code: 'guest-error', message: FAIL_MESSAGE });
  });

  it('answers a trap as a failure carrying the trap message', async () => {
    const error = failed(await r.runner.call('basic', 'trap', {}));
    expect(error.code).toBe('trap');
    expect(error.message).toMatch(/^basic\.trap trapped: .*unreachable/);
  });

  it('refuses invalid arguments, naming the path, before the guest runs', async () => {
    const outcome = await r.runner.call('relay', 'forecast', { days: 'soon' });
    expect(failed(outcome)).toEqual({
      code: 'invalid-arguments',
      message: 'relay.forecast: argument /days must be integer',
      path: '/days',
    });
    expect(outcome.reached.tools).toEqual([]);
    const missing = failed(await r.runner.call('relay', 'forecast', {}));
    expect(missing).toMatchObject({ code: 'invalid-arguments', path: '/days' });
    expect(missing.message).toContain('argument /days is required');
    expect(failed(await r.runner.call('relay', 'forecast', [1]))).toMatchObject({
      code: 'invalid-arguments',
      message: 'relay.forecast: arguments must be object',
    });
    expect(r.logs.filter((l) => l.message === FORECAST_LOG.message)).toEqual([]);
    // The same tool with valid arguments does run, and its log line arrives before the call answers.
    expect(ok(await r.runner.call('relay', 'forecast', { days: 3 }))).toEqual({ days: 3 });
    expect(r.logs.filter((l) => l.message === FORECAST_LOG.message)).toEqual([{ harness: 'relay', tool: 'forecast', ...FORECAST_LOG }]);
  });

  it('refuses arguments that are not JSON', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(failed(await r.runner.call('basic', 'echo', cyclic)).code).toBe('invalid-arguments');
    expect(failed(await r.runner.call('basic', 'echo', { n: 1n })).code).toBe('invalid-arguments');
  });

  it('answers unknown harnesses and tools without running anything', async () => {
    expect(failed(await r.runner.call('nobody', 'echo', {})).code).toBe('unknown-harness');
    expect(failed(await r.runner.call('basic', 'nothing', {})).code).toBe('unknown-tool');
  });

  it('refuses a result that is not a valid envelope as bad-result', async () => {
    expect(ok(await r.runner.call('basic', 'raw', { ok: [1, 'two'] }))).toEqual([1, 'two']);
    expect(failed(await r.runner.call('basic', 'raw', { error: 'said so' }))).toEqual({ code: 'guest-error', message: 'said so' });
    for (const envelope of [{ nope: 1 }, { error: 5 }, { ok: 1, error: 'both' }, {}]) {
      const error = failed(await r.runner.call('basic', 'raw', envelope));
      expect(error.code, JSON.stringify(envelope)).toBe('bad-result');
      expect(error.message).toContain('not an envelope');
    }
    const garbage = failed(await r.runner.call('basic', 'garbage', {}));
    expect(garbage).toEqual({ code: 'bad-result', message: 'basic.garbage returned a result that is not valid UTF-8' });
    const wild = failed(await r.runner.call('basic', 'wild', {}));
    expect(wild.code).toBe('bad-result');
    expect(wild.message).toContain('outside its');
  });

  it('refuses a result above the limit without reading it', async () => {
    const error = failed(await r.runner.call('basic', 'huge', {}));
    expect(error.code).toBe('result-too-large');
    expect(error.message).toBe(`basic.huge returned ${HUGE_RESULT_CHARS + 9} bytes, above the limit of ${MiB}`);
  });

  it('serves 200 concurrent calls, each with its own answer', async () => {
    const many = recordingRunner({ maxQueue: 200 });
    try {
      await deploy(many.runner, 'basic', basic);
      const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => many.runner.call('basic', 'echo', { i })));
      expect(outcomes.map(ok)).toEqual(Array.from({ length: 200 }, (_, i) => ({ i })));
    } finally {
      await many.runner.close();
    }
  });
});

describe('limits', () => {
  it('reads a result above the default limit when the runner allows it', async () => {
    const { runner } = recordingRunner({ maxResultBytes: 2 * MiB });
    try {
      await deploy(runner, 'basic', basic);
      const value = ok(await runner.call('basic', 'huge', {}));
      expect(typeof value === 'string' && value.length).toBe(HUGE_RESULT_CHARS);
      expect(value).toMatch(/^x+$/);
    } finally {
      await runner.close();
    }
  });

  it('caps guest memory so memory.grow fails inside the guest', async () => {
    const small = recordingRunner({ maxMemoryBytes: 4 * MiB });
    const standard = recordingRunner();
    try {
      await deploy(small.runner, 'basic', basic);
      await deploy(standard.runner, 'basic', basic);
      await deploy(standard.runner, 'bounded', await basicImage({ maxPages: 16 }));
      expect(ok(await small.runner.call('basic', 'grow', {}))).toEqual({ pages: 64 });
      expect(ok(await standard.runner.call('basic', 'grow', {}))).toEqual({ pages: 1024 });
      // A declared maximum below the cap is kept.
      expect(ok(await standard.runner.call('bounded', 'grow', {}))).toEqual({ pages: 16 });
      // Arguments that cannot fit under the cap make the guest's own allocator give up (it traps).
      const big = { text: 'y'.repeat(5 * MiB) };
      const error = failed(await small.runner.call('basic', 'echo', big));
      expect(error.code).toBe('trap');
      // Each call had a fresh instance, and the host is unaffected.
      expect(ok(await small.runner.call('basic', 'echo', { after: true }))).toEqual({ after: true });
      expect(ok(await small.runner.call('basic', 'grow', {}))).toEqual({ pages: 64 });
    } finally {
      await small.runner.close();
      await standard.runner.close();
    }
  });

  // That other calls are served while a guest spins is the next case's, where the test decides when the
  // spinning stops: here the limit does, and a check that the others beat it would be a race.
  it('stops a runaway guest at its time limit, and serves calls after', async () => {
    // The runaway's harness has the short limit; the call after it has the runner's, so that the worker
    // it may have to start first (the stopped ones are gone) is not raced against 300 ms.
    const r = recordingRunner();
    try {
      await deploy(r.runner, 'basic', basic);
      await deploy(r.runner, 'relay', relay, { callTimeoutMs: 300 });
      const stopped = failed(await r.runner.call('relay', 'spin', {}));
      expect(stopped).toEqual({ code: 'timeout', message: expect.stringMatching(stoppedAt('relay.spin', 300)) });
      // The limit covers a whole chain: a nested runaway stops its caller too.
      const nested = failed(await r.runner.call('relay', 'call', { program: 'relay', tool: 'spin', args: {} }));
      expect(nested.code).toBe('timeout');
      expect(ok(await r.runner.call('basic', 'echo', { after: 'timeouts' }))).toEqual({ after: 'timeouts' });
    } finally {
      await r.runner.close();
    }
  });

  it('keeps serving while a guest spins, until its caller cancels it', async () => {
    const r = recordingRunner({ callTimeoutMs: 120_000 });
    try {
      await deploy(r.runner, 'basic', basic);
      await deploy(r.runner, 'relay', relay);
      const controller = new AbortController();
      let spinning!: () => void;
      const started = new Promise<void>((resolve) => (spinning = resolve));
      let settled = false;
      const runaway = r.runner
        .call(
          'relay',
          'spin',
          {},
          { signal: controller.signal, onReport: (report) => report.kind === 'log' && report.message === SPIN_LOG.message && spinning() },
        )
        .finally(() => (settled = true));
      await started;
      const during = await Promise.all(Array.from({ length: 50 }, (_, i) => r.runner.call('basic', 'echo', { i })));
      expect(during.map(ok)).toEqual(Array.from({ length: 50 }, (_, i) => ({ i })));
      expect(settled).toBe(false);
      controller.abort();
      expect(failed(await runaway).code).toBe('cancelled');
    } finally {
      await r.runner.close();
    }
  });
});

describe('berm.call', () => {
  const r = recordingRunner();
  beforeAll(async () => {
    await deploy(r.runner, 'basic', basic);
    await deploy(r.runner, 'other', basic);
    await deploy(r.runner, 'relay', relay);
    await deploy(r.runner, 'relay2', relay);
  });
  afterAll(() => r.runner.close());

  const call = (request: unknown) => r.runner.call('relay', 'call', request as object);

  it("runs a declared program's tool and answers its value", async () => {
    const outcome = await call({ program: 'basic', tool: 'echo', args: { nested: [true] } });
    expect(ok(outcome)).toEqual({ ok: { nested: [true] } });
    expect(outcome.reached.tools).toEqual([
      { harness: 'relay', tool: 'call' },
      { harness: 'basic', tool: 'echo' },
    ]);
  });

  it('reaches the program itself without declaring it', async () => {
    expect(ok(await call({ program: 'relay', tool: 'forecast', args: { days: 1 } }))).toEqual({ ok: { days: 1 } });
  });

  it('refuses a program the caller does not declare, even when it is deployed', async () => {
    const outcome = await call({ program: 'other', tool: 'echo', args: {} });
    expect(ok(outcome)).toEqual({ refused: 'program "other" is neither "relay" itself nor declared in its deps.programs' });
    expect(outcome.reached.tools).toEqual([{ harness: 'relay', tool: 'call' }]);
  });

  it('refuses a declared program that is not deployed, an unknown tool and a malformed request', async () => {
    expect(ok(await call({ program: 'ghost', tool: 'echo', args: {} }))).toEqual({ refused: 'program "ghost" is not deployed' });
    expect(ok(await call({ program: 'basic', tool: 'nothing', args: {} }))).toEqual({ refused: 'program "basic" has no tool "nothing"' });
    expect(ok(await call({ tool: 'echo' }))).toEqual({ refused: expect.stringContaining('a berm.call request is') });
  });

  it('refuses bad arguments with the path, and the target does not run', async () => {
    const before = r.logs.length;
    const outcome = await call({ program: 'relay', tool: 'forecast', args: { days: -2 } });
    expect(ok(outcome)).toEqual({ refused: 'relay.forecast: argument /days must be >= 0' });
    expect(r.logs.length).toBe(before);
    expect(outcome.reached.tools).toEqual([{ harness: 'relay', tool: 'call' }]);
  });

  it('answers failed when the target ran and failed', async () => {
    const trapped = ok(await call({ program: 'basic', tool: 'trap', args: {} })) as { failed: string };
    expect(Object.keys(trapped)).toEqual(['failed']);
    expect(trapped.failed).toMatch(/^basic\.trap trapped: .*unreachable/);
    expect(ok(await call({ program: 'basic', tool: 'fail', args: {} }))).toEqual({ failed: FAIL_MESSAGE });
    const tooBig = ok(await call({ program: 'basic', tool: 'huge', args: {} })) as { failed: string };
    expect(tooBig.failed).toContain('above the limit');
  });

  it('carries a call through an intermediate program, and reports every tool reached', async () => {
    const outcome = await call({ program: 'relay2', tool: 'call', args: { program: 'basic', tool: 'echo', args: { x: 1 } } });
    expect(ok(outcome)).toEqual({ ok: { ok: { x: 1 } } });
    expect(outcome.reached.tools).toEqual([
      { harness: 'relay', tool: 'call' },
      { harness: 'relay2', tool: 'call' },
      { harness: 'basic', tool: 'echo' },
    ]);
  });

  it('bounds a self-recursive chain at the default depth of 4', async () => {
    const outcome = await r.runner.call('relay', 'chain', { program: 'relay' });
    let value = ok(outcome) as Record<string, unknown>;
    let levels = 0;
    while ('ok' in value) {
      value = value.ok as Record<string, unknown>;
      levels++;
    }
    expect(levels).toBe(4);
    expect(value).toEqual({ refused: 'the call chain is at its depth limit (4): relay.chain was not called' });
  });

  it('refuses the first nested call when the depth limit is 0', async () => {
    const flat = recordingRunner({ maxCallDepth: 0 });
    try {
      await deploy(flat.runner, 'relay', relay);
      await deploy(flat.runner, 'basic', basic);
      expect(ok(await flat.runner.call('relay', 'chain', { program: 'relay' }))).toEqual({
        refused: 'the call chain is at its depth limit (0): relay.chain was not called',
      });
      expect(ok(await flat.runner.call('relay', 'call', { program: 'basic', tool: 'echo', args: {} }))).toEqual({
        refused: expect.stringContaining('depth limit (0)'),
      });
    } finally {
      await flat.runner.close();
    }
  });

  it('refuses at the depth limit rather than calling the program beyond it "not deployed"', async () => {
    const shallow = recordingRunner({ maxCallDepth: 1 });
    try {
      for (const [name, image] of [
        ['relay', relay],
        ['relay2', relay],
        ['basic', basic],
      ] as const)
        await deploy(shallow.runner, name, image);
      const outcome = await shallow.runner.call('relay', 'call', {
        program: 'relay2',
        tool: 'call',
        args: { program: 'basic', tool: 'echo', args: {} },
      });
      expect(ok(outcome)).toEqual({ ok: { refused: 'the call chain is at its depth limit (1): basic.echo was not called' } });
    } finally {
      await shallow.runner.close();
    }
  });

  it('follows a redeploy and an undeploy of the target', async () => {
    const local = recordingRunner();
    try {
      await deploy(local.runner, 'relay', relay);
      expect(ok(await local.runner.call('relay', 'call', { program: 'basic', tool: 'echo', args: { v: 1 } }))).toEqual({
        refused: 'program "basic" is not deployed',
      });
      await deploy(local.runner, 'basic', basic);
      expect(ok(await local.runner.call('relay', 'call', { program: 'basic', tool: 'echo', args: { v: 2 } }))).toEqual({ ok: { v: 2 } });
      expect(local.runner.removeHarness('basic')).toBe(true);
      expect(ok(await local.runner.call('relay', 'call', { program: 'basic', tool: 'echo', args: { v: 3 } }))).toEqual({
        refused: 'program "basic" is not deployed',
      });
    } finally {
      await local.runner.close();
    }
  });
});

describe('berm.emit and berm.log', () => {
  const r = recordingRunner();
  beforeAll(async () => {
    await deploy(r.runner, 'relay', relay);
    await deploy(r.runner, 'relay2', relay);
  });
  afterAll(() => r.runner.close());

  it('accepts a declared event with matching fields and hands it to the call’s onReport', async () => {
    const mine: unknown[] = [];
    const outcome = await r.runner.call(
      'relay',
      'emit',
      { event: 'reading', fields: { celsius: 21.5 } },
      { onReport: (report) => report.kind === 'event' && mine.push([report.harness, report.event, report.fields]) },
    );
    expect(ok(outcome)).toEqual({ ok: null });
    expect(r.events).toEqual([{ harness: 'relay', event: 'reading', fields: { celsius: 21.5 } }]);
    expect(mine).toEqual([['relay', 'reading', { celsius: 21.5 }]]);
    expect(outcome.reached.events).toEqual([{ harness: 'relay', event: 'reading' }]);
  });

  it('refuses an undeclared event and fields that do not match', async () => {
    const before = r.events.length;
    expect(ok(await r.runner.call('relay', 'emit', { event: 'rumour', fields: {} }))).toEqual({
      refused: 'event "rumour" is not declared by "relay"',
    });
    expect(ok(await r.runner.call('relay', 'emit', { event: 'reading', fields: { celsius: 'warm' } }))).toEqual({
      refused: 'event "reading": field /celsius must be number',
    });
    expect(ok(await r.runner.call('relay', 'emit', { event: 'reading', fields: {} }))).toEqual({
      refused: 'event "reading": field /celsius is required',
    });
    expect(r.events.length).toBe(before);
  });

  it('attributes an event emitted by a nested call to the program that emitted it', async () => {
    const outcome = await r.runner.call('relay', 'call', {
      program: 'relay2',
      tool: 'emit',
      args: { event: 'reading', fields: { celsius: -4 } },
    });
    expect(ok(outcome)).toEqual({ ok: { ok: null } });
    expect(r.events.at(-1)).toEqual({ harness: 'relay2', event: 'reading', fields: { celsius: -4 } });
    expect(outcome.reached).toEqual({
      tools: [
        { harness: 'relay', tool: 'call' },
        { harness: 'relay2', tool: 'emit' },
      ],
      events: [{ harness: 'relay2', event: 'reading' }],
    });
  });

  it('passes log lines to the log callback tagged with harness and tool', async () => {
    const mine: LogLine[] = [];
    const onReport = (report: GuestReport) => report.kind === 'log' && mine.push(lineOf(report));
    expect(ok(await r.runner.call('relay', 'log', { level: 'warn', message: 'low battery' }, { onReport }))).toEqual({
      ok: null,
    });
    const entry = { harness: 'relay', tool: 'log', level: 'warn', message: 'low battery' };
    expect(r.logs.at(-1)).toEqual(entry);
    expect(mine).toEqual([entry]);
    await r.runner.call('relay', 'call', { program: 'relay2', tool: 'log', args: { level: 'debug', message: 'from below' } });
    expect(r.logs.at(-1)).toEqual({ harness: 'relay2', tool: 'log', level: 'debug', message: 'from below' });
  });

  it('hands a report to the call’s listener when the runner’s throws, and warns of the throw', async () => {
    const broken = new ToolRunner({
      threads: 1,
      onReport: () => {
        throw new Error('the runner’s listener broke');
      },
    });
    try {
      await deploy(broken, 'relay', relay);
      // Only the runner's own warning: another one of the process's may come meanwhile.
      const warned = new Promise<Error>((resolve) => {
        const listen = (warning: Error): void => {
          if (!warning.message.startsWith('a tool runner listener threw')) return;
          process.off('warning', listen);
          resolve(warning);
        };
        process.on('warning', listen);
      });
      const mine: LogLine[] = [];
      const onReport = (report: GuestReport) => report.kind === 'log' && mine.push(lineOf(report));
      expect(ok(await broken.call('relay', 'log', { level: 'info', message: 'still here' }, { onReport }))).toEqual({ ok: null });
      expect(mine).toEqual([{ harness: 'relay', tool: 'log', level: 'info', message: 'still here' }]);
      expect((await warned).message).toBe('a tool runner listener threw: the runner’s listener broke');
    } finally {
      await broken.close();
    }
  });

  it('bounds the bytes of logs and events one call may send', async () => {
    const tight = recordingRunner({ maxResultBytes: 100 });
    try {
      await deploy(tight.runner, 'relay', relay);
      const request = { level: 'info', message: 'x'.repeat(30) };
      expect(JSON.stringify(request).length).toBeLessThan(100);
      expect(ok(await tight.runner.call('relay', 'log_twice', request))).toEqual({
        refused: 'this call has sent its 100 bytes of logs and events',
      });
      expect(tight.logs).toEqual([{ harness: 'relay', tool: 'log_twice', ...request }]);
      // The budget is per call: the next call may log again.
      expect(ok(await tight.runner.call('relay', 'log', request))).toEqual({ ok: null });
      expect(tight.logs).toHaveLength(2);
    } finally {
      await tight.runner.close();
    }
  });

  it('refuses a log line with an unknown level or no message', async () => {
    const before = r.logs.length;
    expect(ok(await r.runner.call('relay', 'log', { level: 'shout', message: 'x' }))).toEqual({
      refused: expect.stringContaining('log level "shout"'),
    });
    expect(ok(await r.runner.call('relay', 'log', { level: 'info' }))).toEqual({
      refused: expect.stringContaining('a berm.log request is'),
    });
    expect(r.logs.length).toBe(before);
  });
});

describe('deploy-time checks', () => {
  it('caps the memory section in the bytes, keeping a smaller declared maximum', async () => {
    const cases: Array<[string, string]> = [
      ['(memory 2)', '(memory 2 64)'],
      ['(memory 2 1000)', '(memory 2 64)'],
      ['(memory 2 8)', '(memory 2 8)'],
      ['(memory 1 100) (data (i32.const 0) "hi")', '(memory 1 64) (data (i32.const 0) "hi")'],
    ];
    for (const [declared, expected] of cases) {
      const capped = capMemory(await wat2wasm(`(module ${declared} (export "memory" (memory 0)))`), 4 * MiB);
      expect(Buffer.from(capped).equals(Buffer.from(await wat2wasm(`(module ${expected} (export "memory" (memory 0)))`))), declared).toBe(
        true,
      );
      expect(WebAssembly.validate(capped)).toBe(true);
    }
  });

  it('leaves a module without memory untouched', async () => {
    const bytes = await wat2wasm('(module (func (export "f")))');
    expect(capMemory(bytes, 4 * MiB)).toBe(bytes);
  });

  it('refuses a memory that starts above the cap, and bytes that are not wasm', async () => {
    const big = (await basicImage({ initialPages: 65 })).bytes;
    expect(() => capMemory(big, 4 * MiB)).toThrow(expect.objectContaining({ code: 'memory-too-large' }));
    expect(() => capMemory(big, 4 * MiB)).toThrow('memory 0 starts at 65 pages (4259840 bytes), above the memory cap of 64 pages (4 MiB)');
    const { runner } = recordingRunner({ maxMemoryBytes: 4 * MiB });
    try {
      await expect(runner.compile(big)).rejects.toBeInstanceOf(RunnerError);
    } finally {
      await runner.close();
    }
    expect(() => capMemory(Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 9, 1]), 4 * MiB)).toThrow(
      expect.objectContaining({ code: 'bad-module' }),
    );
    expect(() => capMemory(new TextEncoder().encode('not wasm'), 4 * MiB)).toThrow(expect.objectContaining({ code: 'bad-module' }));
  });

  it('refuses a harness whose schema does not compile, and keeps the previous deploy', async () => {
    const { runner } = recordingRunner();
    try {
      await deploy(runner, 'basic', basic);
      const module = await runner.compile(basic.bytes);
      const manifest = structuredClone(basic.manifest);
      manifest.tools[0]!.arguments = { type: 'object', properties: { a: { $ref: '#/$defs/Missing' } } };
      expect(() => runner.setHarness('basic', { module, manifest, digest: 'sha256:00' })).toThrow(
        expect.objectContaining({ code: 'bad-schema' }),
      );
      manifest.tools[0]!.arguments = { type: 'objekt' };
      expect(() => runner.prepareHarness({ module, manifest, digest: 'sha256:00' })).toThrow(
        expect.objectContaining({ code: 'bad-schema' }),
      );
      expect(ok(await runner.call('basic', 'echo', { still: 'here' }))).toEqual({ still: 'here' });
      // A tool the module does not export is refused too.
      const ghostTool = structuredClone(basic.manifest);
      ghostTool.tools.push({ name: 'absent', description: '', arguments: { type: 'object' } });
      expect(() => runner.prepareHarness({ module, manifest: ghostTool, digest: 'sha256:00' })).toThrow(
        expect.objectContaining({ code: 'bad-harness' }),
      );
      // Prepared first, then set: the two-phase deploy.
      const prepared = runner.prepareHarness({ module, manifest: basic.manifest, digest: 'sha256:02' });
      runner.setHarness('second', prepared);
      expect(runner.digestOf('second')).toBe('sha256:02');
      expect(ok(await runner.call('second', 'echo', { two: 2 }))).toEqual({ two: 2 });
    } finally {
      await runner.close();
    }
  });

  it('accepts draft-07 $schema and definitions references as 2020-12', async () => {
    const { runner } = recordingRunner();
    try {
      const module = await runner.compile(basic.bytes);
      const manifest = structuredClone(basic.manifest);
      manifest.tools[0]!.arguments = {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { when: { $ref: '#/definitions/Day' } },
        definitions: { Day: { type: 'string', enum: ['today', 'tomorrow'] } },
      };
      runner.setHarness('basic', { module, manifest, digest: 'sha256:01' });
      expect(ok(await runner.call('basic', 'echo', { when: 'today' }))).toEqual({ when: 'today' });
      expect(failed(await runner.call('basic', 'echo', { when: 'never' }))).toMatchObject({ code: 'invalid-arguments', path: '/when' });
    } finally {
      await runner.close();
    }
  });

  it('does not instantiate a guest that imports a host call this runtime does not serve', async () => {
    const { runner } = recordingRunner();
    try {
      const wat = basicWat().replace('(module', '(module (import "berm" "http_fetch" (func (param i32 i32) (result i64)))');
      await deploy(runner, 'fetcher', { bytes: await wat2wasm(wat), manifest: basicManifest() });
      expect(failed(await runner.call('fetcher', 'echo', {}))).toEqual({
        code: 'bad-module',
        message: 'fetcher imports function berm.http_fetch, which this runtime does not serve',
      });
    } finally {
      await runner.close();
    }
  });

  it('answers closed for a call running when the runner closes, and for calls after', async () => {
    const { runner } = recordingRunner();
    await deploy(runner, 'relay', relay);
    let spinning!: () => void;
    const started = new Promise<void>((resolve) => (spinning = resolve));
    const running = runner.call('relay', 'spin', {}, { onReport: (report) => report.kind === 'log' && spinning() });
    await started;
    await runner.close();
    expect(failed(await running).code).toBe('closed');
    expect(failed(await runner.call('relay', 'log', {})).code).toBe('closed');
    expect(() =>
      runner.setHarness('relay', { module: new WebAssembly.Module(relay.bytes), manifest: relay.manifest, digest: 'sha256:03' }),
    ).toThrow(expect.objectContaining({ code: 'closed' }));
  });
});

describe('a host call whose answer the guest cannot take', () => {
  // berm_alloc hands out the arguments' room, then answers the host call's allocation with `second`:
  // a pointer past the end of the one-page memory, or a trap.
  const guest = (second: string): string => `(module
    (import "berm" "log" (func $log (param i32 i32) (result i64)))
    (memory (export "memory") 1)
    (data (i32.const 16) "{\\"level\\":\\"info\\",\\"message\\":\\"hello\\"}")
    (data (i32.const 64) "{\\"ok\\":1}")
    (global $calls (mut i32) (i32.const 0))
    (func (export "berm_alloc") (param $len i32) (result i32)
      (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
      (if (result i32) (i32.eq (global.get $calls) (i32.const 1)) (then (i32.const 1024)) (else ${second})))
    (func (export "berm_tool_log") (param i32 i32) (result i64)
      (drop (call $log (i32.const 16) (i32.const 36)))
      (i64.or (i64.shl (i64.const 64) (i64.const 32)) (i64.const 8))))`;
  const manifest = sampleManifest({ tools: [{ name: 'log', description: 'Logs once.', arguments: { type: 'object' } }] });
  const r = recordingRunner();
  beforeAll(async () => {
    for (const [name, second] of [
      ['wild', '(i32.const 65530)'],
      ['trapping', '(unreachable)'],
    ] as const) {
      const bytes = await buildImage(guest(second), manifest);
      await deploy(r.runner, name, { bytes, manifest });
    }
    await deploy(r.runner, 'basic', basic);
  });
  afterAll(() => r.runner.close());

  it('fails the call, saying where, when berm_alloc answers room outside memory', async () => {
    const error = failed(await r.runner.call('wild', 'log', {}));
    expect(error.code).toBe('bad-result');
    expect(error.message).toMatch(/^wild\.log: berm_alloc\(\d+\) returned 65530, which does not leave room inside the 65536-byte memory$/);
  });

  it('answers a trap in berm_alloc as the guest trapping, and the runner keeps serving', async () => {
    const error = failed(await r.runner.call('trapping', 'log', {}));
    expect(error.code).toBe('trap');
    expect(error.message).toMatch(/^trapping\.log trapped: .*unreachable/);
    expect(ok(await r.runner.call('basic', 'echo', { after: 'trap' }))).toEqual({ after: 'trap' });
  });
});
