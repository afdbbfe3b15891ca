// tools/list is answered from the catalog's serialised list (src/mcp/fast-list.ts), kept until the
// deployed set changes: the same answer as the SDK's on the wire, in both protocol generations, and the
// new list after each deploy, replace and undeploy. A real bermd, raw HTTP: each list is asked alone
// (which the fast path takes) and in a form only the SDK answers (a batch of one on a 2025 session, a
// `_meta` key the fast path does not read in 2026-07-28), and bermd's debug log says which path answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicImage } from '../../../test/helpers/guest.js';
import { harnessImage, manifestWithTools, sampleManifest } from '../../../test/helpers/harness.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { deploy, envelope, messages, modernHeaders, post, type RawResponse, undeploy } from './mcp-client.js';

const WAYS = [
  { way: 'with the fast path', args: [], via: 'fast-path' },
  { way: 'with --mcp-fast-path false', args: ['--mcp-fast-path', 'false'], via: undefined },
] as const;

describe.each(WAYS)('/mcp tools/list, kept until the set changes, $way', ({ args, via }) => {
  let d: RunningDaemon;
  let session: Record<string, string>;
  let nextId = 1;

  beforeAll(async () => {
    d = await startDaemon({ args: ['--log-level', 'debug', ...args] });
    await deploy(d.url, 'basic', (await basicImage()).bytes);
    await deploy(d.url, 'sample', await harnessImage(sampleManifest()));
    const accept = 'application/json, text/event-stream';
    const init = await post(
      d.url,
      { 'content-type': 'application/json', accept },
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'list', version: '0' } },
      },
    );
    session = { 'content-type': 'application/json', accept, 'mcp-session-id': init.headers['mcp-session-id']! };
    expect((await post(d.url, session, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  /** How many `tools/list answered` lines the fast path has logged. */
  const fastAnswers = (): number => d.log().filter((e) => e.msg === 'tools/list answered').length;

  /**
   * The tool names listed, asked in each generation both ways, each pair checked to be the same answer
   * (status, headers, messages), and the fast path checked to have answered the lone requests (when on).
   */
  async function listed(): Promise<{ legacy: string[]; modern: string[] }> {
    const before = fastAnswers();
    const legacyId = nextId++;
    const request = { jsonrpc: '2.0', id: legacyId, method: 'tools/list' };
    const alone = await post(d.url, session, request);
    const batched = await post(d.url, session, [request]);
    expect(alone.status).toBe(200);
    expect(alone.headers).toEqual(batched.headers);
    expect(messages(alone)).toEqual(messages(batched));

    const modernId = `m${nextId++}`;
    const modern = (meta: Record<string, unknown>) => ({ jsonrpc: '2.0', id: modernId, method: 'tools/list', params: { _meta: meta } });
    const fast = await post(d.url, modernHeaders('tools/list'), modern(envelope()));
    const sdk = await post(d.url, modernHeaders('tools/list'), modern(envelope({ 'example.com/unread': true })));
    expect(fast.status).toBe(200);
    expect(fast.headers).toEqual(sdk.headers);
    expect(messages(fast)).toEqual(messages(sdk));
    expect(messages(fast)[0]).toMatchObject({ id: modernId, result: { resultType: 'complete', ttlMs: 5000 } });

    // Each path's debug line is written before its answer, so the count is final here.
    expect(fastAnswers() - before).toBe(via === 'fast-path' ? 2 : 0);
    const names = (res: RawResponse) => ((messages(res)[0]!.result as { tools: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
    return { legacy: names(alone), modern: names(fast) };
  }

  it('lists the new set after a deploy, a replace and an undeploy, as the SDK does', async () => {
    const first = await listed();
    expect(first.legacy).toEqual(first.modern);
    expect(first.legacy).toContain('sample.echo');
    expect(first.legacy.some((n) => n.startsWith('extra.'))).toBe(false);

    await deploy(d.url, 'extra', await harnessImage(manifestWithTools(['alpha', 'beta'])));
    const deployed = await listed();
    expect(deployed.modern).toEqual([...first.modern, 'extra.alpha', 'extra.beta'].sort());

    await deploy(d.url, 'extra', await harnessImage(manifestWithTools(['gamma'], { version: '2.0.0' })), {});
    const replaced = await listed();
    expect(replaced.legacy).toEqual([...first.legacy, 'extra.gamma'].sort());

    await undeploy(d.url, 'extra');
    const undeployed = await listed();
    expect(undeployed).toEqual(first);
  });
});
