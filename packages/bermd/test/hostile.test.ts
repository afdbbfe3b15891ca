// Hostile guests against a real bermd, called as an MCP client calls them: each misbehaviour gives its
// caller an error result that names the cause, the daemon keeps serving, and a well-behaved call right
// after succeeds. Then a flood of calls at one harness, which must not reach the others.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FLOOD_EVENT, FLOOD_LOG, HUGE_RESULT_CHARS, SPIN_LOG, basicImage, hostileImage, relayImage } from '../../../test/helpers/guest.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { connect, deploy, textOf, valueOf, type McpConnection } from './mcp-client.js';
import { stoppedAt } from '../../../test/helpers/timeouts.js';

const K = 1024;
/** The result size limit, which is also each call's budget of log and event bytes. */
const BUDGET = 16 * K;

function call(c: McpConnection, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return c.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
}

/** The error of a tool result: its code and text. */
function failure(result: CallToolResult): { code: unknown; text: string } {
  expect(result.isError).toBe(true);
  return { code: (result._meta?.['berm/error'] as { code?: unknown } | undefined)?.code, text: textOf(result) };
}

describe('hostile guests', () => {
  let d: RunningDaemon;
  let c: McpConnection;

  beforeAll(async () => {
    d = await startDaemon({ args: ['--call-timeout', '2s', '--max-memory', '16M', '--max-result-size', String(BUDGET)] });
    await deploy(d.url, 'basic', (await basicImage()).bytes);
    // Each the other's peer: a's ping calls b's, which calls a's.
    await deploy(d.url, 'a', (await hostileImage('b')).bytes);
    await deploy(d.url, 'b', (await hostileImage('a')).bytes);
    c = await connect(d.url);
    // Events reach a session that asked for them.
    await c.client.setLoggingLevel('notice');
  });

  afterAll(async () => {
    await c.close();
    await d.stop();
    await removeDir(d.stateDir);
  });

  // What every case ends with: the process is up and a well-behaved call succeeds.
  afterEach(async () => {
    expect(d.process.exitCode).toBeNull();
    expect(valueOf(await call(c, 'basic.echo', { after: 'hostile' }))).toEqual({ after: 'hostile' });
  });

  it('an infinite loop is stopped at its time limit', async () => {
    expect(failure(await call(c, 'a.spin'))).toEqual({ code: 'timeout', text: expect.stringMatching(stoppedAt('a.spin', 2000)) });
  });

  it('memory.grow until refused: the trap says the memory is at its limit', async () => {
    const { code, text } = failure(await call(c, 'a.hog'));
    expect(code).toBe('trap');
    expect(text).toMatch(/^a\.hog trapped: unreachable/);
    expect(text).toContain(`(its memory is at its limit of ${16 * K * K} bytes: it could not grow further)`);
  });

  it('unbounded recursion traps as a stack overflow', async () => {
    const { code, text } = failure(await call(c, 'a.recurse'));
    expect(code).toBe('trap');
    expect(text).toMatch(/^a\.recurse trapped: stack overflow \(.*call stack.*\)$/i);
  });

  it('a result pointer outside memory is a bad result, and nothing is read', async () => {
    expect(failure(await call(c, 'basic.wild'))).toEqual({
      code: 'bad-result',
      text: `basic.wild returned bytes ${0xffff0000}..${0xffff0000 + 16}, outside its 65536-byte memory`,
    });
  });

  it('a result over the size limit is refused without being read', async () => {
    expect(failure(await call(c, 'basic.huge'))).toEqual({
      code: 'result-too-large',
      text: `basic.huge returned ${HUGE_RESULT_CHARS + 9} bytes, above the limit of ${BUDGET}`,
    });
  });

  it('a flood of berm.log and one of events are cut at the call’s budget, and stopped at the time limit saying so', async () => {
    const before = d.log().length;
    const received = c.messages.received.length;
    const [logs, events] = await Promise.all([call(c, 'a.log_flood'), call(c, 'b.emit_flood')]);
    const spent = `; it had sent its ${BUDGET} bytes of logs and events, and went on sending after they were refused`;
    expect(failure(logs)).toEqual({ code: 'timeout', text: expect.stringMatching(stoppedAt('a.log_flood', 2000, spent)) });
    expect(failure(events)).toEqual({ code: 'timeout', text: expect.stringMatching(stoppedAt('b.emit_flood', 2000, spent)) });
    // What reached the log and the session is bounded by the budget, whatever the guests sent.
    const logged = d.log().slice(before);
    const floodLines = logged.filter((e) => e.msg === FLOOD_LOG.message && e.harness === 'a');
    const eventLines = logged.filter((e) => e.msg === 'event' && e.harness === 'b');
    const ticks = c.messages.received.slice(received).filter((m) => m.logger === 'b');
    expect(floodLines.length).toBeGreaterThan(0);
    expect(floodLines.length).toBeLessThanOrEqual(Math.floor(BUDGET / JSON.stringify(FLOOD_LOG).length));
    expect(ticks.length).toBeGreaterThan(0);
    expect(ticks.length).toBeLessThanOrEqual(Math.floor(BUDGET / JSON.stringify(FLOOD_EVENT).length));
    expect(eventLines.length).toBe(ticks.length);
  });

  it('a berm.call cycle a→b→a runs to the depth bound, and the refusal comes back up', async () => {
    expect(failure(await call(c, 'a.ping'))).toEqual({
      code: 'guest-error',
      text: 'the call chain is at its depth limit (4): b.ping was not called',
    });
    // Every level ran: both were used.
    const used = (await (await fetch(`${d.url}/harnesses/b`)).json()) as { usage: { tools: Record<string, string | null> } };
    expect(used.usage.tools.ping).not.toBeNull();
  });
});

describe('a flood of calls at one harness', () => {
  let d: RunningDaemon;
  afterAll(async () => {
    await d.stop();
    await removeDir(d.stateDir);
  });

  it('fills only that harness’s line: the calls past it are refused as busy at once, and the others are served', async () => {
    d = await startDaemon({ args: ['--call-timeout', '2m', '--max-concurrency', '1', '--workers', '2', '--max-queue', '2'] });
    await deploy(d.url, 'basic', (await basicImage()).bytes);
    await deploy(d.url, 'relay', (await relayImage()).bytes);
    const flooder = await connect(d.url);
    const other = await connect(d.url);
    try {
      // One call holds relay's only slot...
      void call(flooder, 'relay.spin').catch(() => {});
      await d.waitForLog((e) => e.msg === SPIN_LOG.message);
      // ...two wait in its line, and the five past it are answered at once.
      const answered: CallToolResult[] = [];
      let fifth!: () => void;
      const five = new Promise<void>((resolve) => (fifth = resolve));
      for (let i = 0; i < 7; i++) {
        call(flooder, 'relay.spin').then(
          (r) => {
            answered.push(r);
            if (answered.length === 5) fifth();
          },
          () => {},
        );
      }
      await five;
      for (const result of answered) {
        expect(failure(result)).toEqual({
          code: 'busy',
          text: 'bermd is busy: 2 calls of relay are already waiting for a worker (--max-queue); relay.spin did not run',
        });
      }
      expect(valueOf(await call(other, 'basic.echo', { during: 'flood' }))).toEqual({ during: 'flood' });
      expect(d.log().filter((e) => e.msg === SPIN_LOG.message)).toHaveLength(1);
    } finally {
      // The flooder going away ends its calls: the one running and the two waiting.
      await flooder.close();
      await other.close();
    }
    const cancelled = (): number => d.log().filter((e) => e.msg === 'call cancelled by its caller').length;
    await d.waitForLog((e) => e.msg === 'call cancelled by its caller' && cancelled() === 3);
    expect(d.log().filter((e) => e.msg === SPIN_LOG.message)).toHaveLength(1);
  });
});
