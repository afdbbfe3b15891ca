// A failure of bermd's own in the middle of a request is answered 500 `internal` with words that say
// nothing of it, and logged with the error it answers for: its message and its stack, as the cause of
// the error answered. The failure is the test seam's (BERMD_FAULT_AT=STEP:throw), thrown inside a deploy.
import { afterEach, describe, expect, it } from 'vitest';
import { harnessImage } from '../../../test/helpers/harness.js';
import { exited, launchDaemon, type RunningDaemon, startDaemon } from './daemon.js';
import { put } from './mcp-client.js';

const daemons: RunningDaemon[] = [];
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.stop()));
});

describe('a failure inside a deploy', () => {
  it('is answered 500 internal, and the log line holds the original error, message and stack', async () => {
    const d = await startDaemon({ env: { BERMD_FAULT_AT: 'deploy-prepared:throw' } });
    daemons.push(d);
    expect(await d.waitForLog((e) => e.step === 'deploy-prepared')).toMatchObject({ kind: 'throw', level: 40 });

    const res = await put(`${d.url}/harnesses/h`, await harnessImage());
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: 'internal', message: 'bermd failed to answer this request; its log says why' } });

    const line = await d.waitForLog((e) => e.level === 50 && e.msg === 'request failed');
    const err = line.err as { type: string; code: string; message: string; stack: string };
    expect(err).toMatchObject({ type: 'BermdError', code: 'internal' });
    expect(err.message).toContain('a fault injected at deploy-prepared (BERMD_FAULT_AT=deploy-prepared:throw)');
    // The stack goes on into the cause's own: where it was thrown, in the registry's deploy.
    const cause = err.stack.slice(err.stack.indexOf('\ncaused by: '));
    expect(cause).toMatch(/^\ncaused by: InjectedFault: a fault injected at deploy-prepared/);
    expect(cause).toMatch(/at reached \(.*\/dist\/faults\.js:\d+:\d+\)/);
    expect(cause).toMatch(/\n {4}at .*\/dist\/deploy\/registry\.js:\d+:\d+/);

    // It failed that request only: nothing was stored, and the daemon answers on.
    expect(await (await fetch(`${d.url}/harnesses`)).json()).toEqual([]);
  });

  it('BERMD_FAULT_AT refuses a kind other than throw, naming what it takes', async () => {
    const launched = await launchDaemon({ env: { BERMD_FAULT_AT: 'deploy-prepared:explode' } });
    expect(await exited(launched.process)).toBe(2);
    expect(launched.stderr()).toContain(
      'bermd: BERMD_FAULT_AT=deploy-prepared:explode: after the step, only :throw may follow (kill the process is the default)',
    );
  });
});
