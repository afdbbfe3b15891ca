// berm.call with the permissions of the chain's caller: the tool runtime on real worker threads, the
// callers real principals (auth/'s), the guests relays compiled from WAT. A chain reaches a program only
// if the principal it runs for may call that program too; a call made for no principal reaches any.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Principal } from '../dist/auth/index.js';
import { barredOf } from '../dist/runtime/call.js';
import { ToolRunner, type CallOutcome, type Caller } from '../dist/runtime/index.js';
import { relayImage, type GuestImage } from '../../../test/helpers/guest.js';

async function deploy(runner: ToolRunner, name: string, image: GuestImage): Promise<void> {
  const module = await runner.compile(image.bytes);
  const digest = `sha256:${createHash('sha256').update(image.bytes).digest('hex')}`;
  runner.setHarness(name, { module, manifest: image.manifest, digest });
}

function ok(outcome: CallOutcome): unknown {
  if (!('ok' in outcome)) throw new Error(`expected ok, got ${JSON.stringify(outcome.error)}`);
  return outcome.ok;
}

const FORECAST = { days: 3 };
/** A `berm.call` request for `program`'s forecast. */
const forecastOf = (program: string): Record<string, unknown> => ({ program, tool: 'forecast', args: FORECAST });

describe('berm.call runs with the permissions of the chain’s caller', () => {
  const runner = new ToolRunner({ threads: { min: 1, max: 2 } });
  const onlyA = new Principal('dana', ['berm:call:a']);
  const aAndB = new Principal('erin', ['berm:call:a', 'berm:call:b']);
  const everything = new Principal('alice', ['berm:call']);

  beforeAll(async () => {
    // a may call b and c (c is never deployed); b may call d.
    await deploy(runner, 'a', await relayImage(['b', 'c']));
    await deploy(runner, 'b', await relayImage(['d']));
    await deploy(runner, 'd', await relayImage());
  });

  afterAll(async () => {
    await runner.close();
  });

  it('refuses a nested call to a program the caller may not call, naming the caller and the scope, and runs nothing of it', async () => {
    const outcome = await runner.call('a', 'call', forecastOf('b'), { caller: onlyA });
    expect(ok(outcome)).toEqual({ refused: 'the caller (dana) does not hold berm:call:b (nor berm:call): b.forecast was not called' });
    expect(outcome.reached.tools).toEqual([{ harness: 'a', tool: 'call' }]);
  });

  it('lets the same nested call through for berm:call, for berm:call:a with berm:call:b, and for a call made for no principal', async () => {
    for (const caller of [everything, aAndB, undefined]) {
      const outcome = await runner.call('a', 'call', forecastOf('b'), { caller });
      expect(ok(outcome), caller?.name ?? 'no caller').toEqual({ ok: FORECAST });
      expect(outcome.reached.tools).toEqual([
        { harness: 'a', tool: 'call' },
        { harness: 'b', tool: 'forecast' },
      ]);
    }
  });

  it('lets a program call itself for a caller that may call it', async () => {
    expect(ok(await runner.call('a', 'call', forecastOf('a'), { caller: onlyA }))).toEqual({ ok: FORECAST });
  });

  it('checks every step of a chain: b may not reach d for a caller holding a and b only', async () => {
    const deeper = { program: 'b', tool: 'call', args: forecastOf('d') };
    expect(ok(await runner.call('a', 'call', deeper, { caller: aAndB }))).toEqual({
      ok: { refused: 'the caller (erin) does not hold berm:call:d (nor berm:call): d.forecast was not called' },
    });
    expect(ok(await runner.call('a', 'call', deeper, { caller: everything }))).toEqual({ ok: { ok: FORECAST } });
  });

  it('refuses a declared program the caller may not call alike whether or not it is deployed', async () => {
    expect(ok(await runner.call('a', 'call', forecastOf('c'), { caller: onlyA }))).toEqual({
      refused: 'the caller (dana) does not hold berm:call:c (nor berm:call): c.forecast was not called',
    });
    // A caller that may call it hears that it is not deployed, as before.
    expect(ok(await runner.call('a', 'call', forecastOf('c'), { caller: everything }))).toEqual({ refused: 'program "c" is not deployed' });
  });

  it('refuses the called harness itself to a caller that may not call it (insufficient-scope), before looking it up', async () => {
    for (const harness of ['b', 'ghost']) {
      const outcome = await runner.call(harness, 'forecast', FORECAST, { caller: onlyA });
      expect(outcome).toEqual({
        error: {
          code: 'insufficient-scope',
          message: `the caller (dana) does not hold berm:call:${harness} (nor berm:call): ${harness}.forecast was not called`,
        },
        reached: { tools: [], events: [] },
      });
    }
  });
});

describe('what a task carries of its caller', () => {
  const payload = (name: string, programs: string[] = []) => ({ name, programs }) as unknown as Parameters<typeof barredOf>[0][number];
  const programs = [payload('a', ['b', 'c', 'a']), payload('b', ['d']), payload('d')];

  it('is nothing for a call made for no principal, or for a caller that may call everything', () => {
    expect(barredOf(programs, undefined)).toBeUndefined();
    expect(barredOf(programs, new Principal('alice', ['berm:call']))).toBeUndefined();
    expect(barredOf(programs, new Principal('erin', ['berm:call:a', 'berm:call:b', 'berm:call:c', 'berm:call:d']))).toBeUndefined();
  });

  it('names, once each, the programs the chain may name that the caller may not call (the called one was checked before)', () => {
    const caller: Caller = { name: 'dana', mayCall: (harness) => harness === 'b' };
    // a is the called program: the runner checked it; a declaring itself bars it for a caller that may not call it.
    expect(barredOf(programs, caller)).toEqual({ caller: 'dana', programs: ['c', 'a', 'd'] });
  });
});
