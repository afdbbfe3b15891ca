// The fast path (src/mcp/fast-call.ts) and the SDK answer the same tools/call with the same bytes on
// the wire, headers and framing included, in both protocol generations: a real bermd, raw HTTP, and
// each call sent both ways. On a 2025 session: alone, which the fast path takes, and as a batch of one,
// which only the SDK's transport answers. In 2026-07-28: alone, and with a `_meta` key the fast path
// does not read, which leaves it to the SDK's stateless handler. Which path answered is read from
// bermd's debug log, one line per call, so the comparison is known to be between the two paths.
// Every test runs twice: with the fast path (the default), and with `--mcp-fast-path false`, where
// every request goes through the SDK and the same comparisons find the same answers.
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPIN_LOG, basicImage, relayImage } from '../../../test/helpers/guest.js';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { connect, deploy, envelope, frames, messages, MODERN, modernHeaders, post } from './mcp-client.js';

const WAYS = [
  { way: 'with the fast path', args: [], via: 'fast-path' },
  { way: 'with --mcp-fast-path false', args: ['--mcp-fast-path', 'false'], via: 'transport' },
] as const;

describe.each(WAYS)('/mcp tools/call on the wire: the fast path and the SDK, $way', ({ args, via }) => {
  const fastPath = via === 'fast-path';
  let d: RunningDaemon;
  let sessionId: string;
  const accept = 'application/json, text/event-stream';
  const base = (): Record<string, string> => ({ 'content-type': 'application/json', accept, 'mcp-session-id': sessionId });

  beforeAll(async () => {
    d = await startDaemon({ args: ['--log-level', 'debug', ...args] });
    await deploy(d.url, 'basic', (await basicImage()).bytes);
    await deploy(d.url, 'relay', (await relayImage(['basic'])).bytes);
    await deploy(d.url, 'sample', await harnessImage(sampleManifest()));
    const init = await post(
      d.url,
      { 'content-type': 'application/json', accept },
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'wire', version: '0' } },
      },
    );
    expect(init.status).toBe(200);
    sessionId = init.headers['mcp-session-id']!;
    expect(sessionId).toBeTruthy();
    expect((await post(d.url, base(), { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    // The caller asks for logs, so an event its call emits travels on the call's own stream.
    const level = await post(d.url, base(), { jsonrpc: '2.0', id: 'level', method: 'logging/setLevel', params: { level: 'info' } });
    expect(frames(level.body)).toEqual([{ jsonrpc: '2.0', id: 'level', result: {} }]);
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  /**
   * Which path answered each `tools/call` with JSON-RPC id `id` on `session` (none for 2026-07-28), in
   * order, once `count` of them are logged (each call logs its line before its answer is written).
   */
  async function answeredVia(session: string | undefined, id: string | number, count: number): Promise<unknown[]> {
    const mine = (e: Record<string, unknown>): boolean => e.msg === 'tools/call finished' && e.session === session && e.rpc_id === id;
    await d.waitForLog((e) => mine(e) && d.log().filter(mine).length >= count);
    return d
      .log()
      .filter(mine)
      .map((e) => e.via);
  }

  const calls: Array<{ title: string; id: string | number; name: string; args?: Record<string, unknown>; meta?: Record<string, unknown> }> =
    [
      { title: 'an object result with structuredContent, numeric id', id: 7, name: 'sample.echo', args: { query: 'wire' } },
      {
        title: 'a plain result, string id, a progress token',
        id: 'call-1',
        name: 'basic.echo',
        args: { a: [1, 'b'] },
        meta: { progressToken: 'p1' },
      },
      { title: 'a guest error, id 0', id: 0, name: 'basic.fail' },
      { title: 'bad arguments, a negative id', id: -3, name: 'relay.forecast', args: { days: 'soon' } },
      { title: 'an unknown tool (a protocol error)', id: 'x', name: 'basic.nothing', args: {} },
      {
        title: 'an event emitted during the call, ahead of the result',
        id: 11,
        name: 'relay.emit',
        args: { event: 'reading', fields: { celsius: 3 } },
      },
    ];

  for (const c of calls) {
    it(`answers ${c.title} on a 2025 session with the same status, headers and frames`, async () => {
      const params: Record<string, unknown> = { name: c.name };
      if (c.args !== undefined) params.arguments = c.args;
      if (c.meta !== undefined) params._meta = c.meta;
      const message = { jsonrpc: '2.0', id: c.id, method: 'tools/call', params };
      for (const version of [undefined, '2025-03-26', '2025-06-18', LATEST_PROTOCOL_VERSION]) {
        const headers = version === undefined ? base() : { ...base(), 'mcp-protocol-version': version };
        const fast = await post(d.url, headers, message);
        const transport = await post(d.url, headers, [message]);
        expect(fast.status, version).toBe(200);
        expect(fast.headers, version).toEqual(transport.headers);
        expect(frames(fast.body), version).toEqual(frames(transport.body));
      }
      // The comparison was between the two paths: each call alone took the fast one (when on), each batch the transport.
      // A call asking for progress is the SDK's to answer, which sends the progress.
      const alone = c.meta?.progressToken === undefined ? via : 'transport';
      expect(await answeredVia(sessionId, c.id, 8)).toEqual(Array.from({ length: 4 }, () => [alone, 'transport']).flat());
      if (c.name === 'relay.emit') {
        const [event, result] = frames((await post(d.url, base(), message)).body) as Array<Record<string, unknown>>;
        expect(event).toMatchObject({ method: 'notifications/message', params: { level: 'notice', logger: 'relay' } });
        expect(result).toMatchObject({ id: c.id, result: { content: [{ type: 'text', text: '{"ok":null}' }] } });
      }
    });
  }

  for (const c of calls) {
    it(`answers ${c.title} in 2026-07-28 with the same status, headers and body`, async () => {
      const id = typeof c.id === 'string' ? `modern-${c.id}` : c.id + 1000;
      const params: Record<string, unknown> = { name: c.name };
      if (c.args !== undefined) params.arguments = c.args;
      const message = (meta: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta: meta } });
      // With and without asking for logs: an event the request asked for turns the answer into a stream.
      for (const asked of [{}, { 'io.modelcontextprotocol/logLevel': 'info' }]) {
        const meta = { ...c.meta, ...envelope(asked) };
        const headers = modernHeaders('tools/call', c.name);
        const fast = await post(d.url, headers, message(meta));
        const sdk = await post(d.url, headers, message({ ...meta, 'example.com/unread': true }));
        expect(fast.status).toBe(200);
        expect(fast.headers).toEqual(sdk.headers);
        expect(messages(fast)).toEqual(messages(sdk));
      }
      const alone = c.meta?.progressToken === undefined ? via : 'transport';
      expect(await answeredVia(undefined, id, 4)).toEqual([alone, 'transport', alone, 'transport']);
      const [result] = messages(await post(d.url, modernHeaders('tools/call', c.name), message(envelope()))) as Array<
        Record<string, unknown>
      >;
      expect(result).toMatchObject({ id, jsonrpc: '2.0' });
      if ('result' in result!) {
        expect(result.result).toMatchObject({ resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'bermd' } } });
      }
      if (c.name === 'relay.emit') {
        const asked = await post(
          d.url,
          modernHeaders('tools/call', c.name),
          message(envelope({ 'io.modelcontextprotocol/logLevel': 'notice' })),
        );
        expect(asked.headers['content-type']).toBe('text/event-stream');
        const [event, answer] = messages(asked) as Array<Record<string, unknown>>;
        expect(event).toMatchObject({ method: 'notifications/message', params: { level: 'notice', logger: 'relay' } });
        expect(answer).toMatchObject({ id, result: { content: [{ type: 'text', text: '{"ok":null}' }] } });
        // Above the event's level: one JSON body, no event.
        const above = await post(
          d.url,
          modernHeaders('tools/call', c.name),
          message(envelope({ 'io.modelcontextprotocol/logLevel': 'warning' })),
        );
        expect(above.headers['content-type']).toBe('application/json');
      }
    });
  }

  it(`answers the v2 SDK client's 2026-07-28 calls on the ${via} path`, async () => {
    const client = new ModernClient({ name: 'wire', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url)));
    try {
      const mine = (e: Record<string, unknown>): boolean =>
        e.msg === 'tools/call finished' && e.tool === 'basic.echo' && e.session === undefined;
      const before = d.log().filter(mine).length;
      const result = await client.callTool({ name: 'basic.echo', arguments: { sdk: 2026 } });
      expect(result.content).toEqual([{ type: 'text', text: '{"sdk":2026}' }]);
      await d.waitForLog((e) => mine(e) && d.log().filter(mine).length > before);
      expect(d.log().filter(mine).slice(before)).toEqual([expect.objectContaining({ via })]);
    } finally {
      await client.close();
    }
  });

  it('stops a 2026-07-28 call whose client closes its connection', async () => {
    await deploy(d.url, 'dropped', (await relayImage()).bytes);
    const gone = new AbortController();
    const answer = post(
      d.url,
      modernHeaders('tools/call', 'dropped.spin'),
      { jsonrpc: '2.0', id: 'drop', method: 'tools/call', params: { name: 'dropped.spin', arguments: {}, _meta: envelope() } },
      'POST',
      gone.signal,
    );
    await d.waitForLog((e) => e.msg === SPIN_LOG.message && e.harness === 'dropped');
    gone.abort();
    await expect(answer).rejects.toThrow();
    await d.waitForLog((e) => e.msg === 'call cancelled by its caller' && e.harness === 'dropped');
  });

  const refusedModern: Array<{ title: string; headers: Record<string, string>; status: number; code: number }> = [
    { title: 'no MCP-Protocol-Version header', headers: { 'mcp-protocol-version': '' }, status: 400, code: -32020 },
    { title: 'no Mcp-Name header', headers: { 'mcp-name': '' }, status: 400, code: -32020 },
    { title: 'an Mcp-Name naming another tool', headers: { 'mcp-name': 'basic.fail' }, status: 400, code: -32020 },
    { title: 'an Mcp-Method naming another method', headers: { 'mcp-method': 'tools/list' }, status: 400, code: -32020 },
    { title: 'a protocol version bermd does not serve', headers: { 'mcp-protocol-version': '2099-01-01' }, status: 400, code: -32020 },
  ];
  for (const r of refusedModern) {
    it(`leaves to the SDK a 2026-07-28 call with ${r.title}, which refuses it`, async () => {
      const id = `refused-${r.title}`;
      const headers = Object.fromEntries(
        Object.entries({ ...modernHeaders('tools/call', 'basic.echo'), ...r.headers }).filter(([, v]) => v !== ''),
      );
      const res = await post(d.url, headers, {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'basic.echo', arguments: {}, _meta: envelope() },
      });
      expect(res.status).toBe(r.status);
      expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', error: { code: r.code } });
      expect(d.log().filter((e) => e.msg === 'tools/call finished' && e.rpc_id === id)).toEqual([]);
    });
  }

  // The fast path routes a call without the SDK's classification once the classification has accepted its
  // envelope (KnownEnvelopes): an envelope that differs from every accepted one is still the SDK's to judge.
  const badEnvelopes: Array<{ title: string; meta: Record<string, unknown> }> = [
    { title: 'a clientInfo whose name is not a string', meta: { 'io.modelcontextprotocol/clientInfo': { name: 5, version: '0' } } },
    { title: 'client capabilities that are not capabilities', meta: { 'io.modelcontextprotocol/clientCapabilities': { roots: 'yes' } } },
  ];
  for (const b of badEnvelopes) {
    it(`refuses a 2026-07-28 call with ${b.title}, after answering calls with a valid envelope on the fast path`, async () => {
      const call = (id: string, meta: Record<string, unknown>) =>
        post(d.url, modernHeaders('tools/call', 'basic.echo'), {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'basic.echo', arguments: {}, _meta: meta },
        });
      const good = `good-${b.title}`;
      for (const id of [`${good}-1`, `${good}-2`]) expect((await call(id, envelope())).status).toBe(200);
      expect([...(await answeredVia(undefined, `${good}-1`, 1)), ...(await answeredVia(undefined, `${good}-2`, 1))]).toEqual([via, via]);
      const id = `bad-${b.title}`;
      const res = await call(id, { ...envelope(), ...b.meta });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32602 } });
      expect(d.log().filter((e) => e.msg === 'tools/call finished' && e.rpc_id === id)).toEqual([]);
    });
  }

  it('leaves to the SDK a 2026-07-28 call naming its tool in Base64, which answers it', async () => {
    const name = 'basic.echo';
    const headers = { ...modernHeaders('tools/call'), 'mcp-name': `=?base64?${Buffer.from(name).toString('base64')}?=` };
    const res = await post(d.url, headers, {
      jsonrpc: '2.0',
      id: 'b64',
      method: 'tools/call',
      params: { name, arguments: { b: 64 }, _meta: envelope() },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ id: 'b64', result: { content: [{ type: 'text', text: '{"b":64}' }] } });
    expect(await answeredVia(undefined, 'b64', 1)).toEqual(['transport']);
  });

  it(`answers the MCP SDK client's calls on the ${via} path`, async () => {
    const c = await connect(d.url);
    try {
      const result = await c.client.callTool({ name: 'basic.echo', arguments: { sdk: true } });
      expect(result.content).toEqual([{ type: 'text', text: '{"sdk":true}' }]);
      const session = c.transport.sessionId!;
      const line = await d.waitForLog((e) => e.msg === 'tools/call finished' && e.session === session);
      expect(line).toMatchObject({ tool: 'basic.echo', via });
      expect(d.log().filter((e) => e.msg === 'tools/call finished' && e.session === session)).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  /** A new session, initialized, whose calls travel alone (so the fast path answers them). */
  async function openSession(): Promise<Record<string, string>> {
    const init = await post(
      d.url,
      { 'content-type': 'application/json', accept },
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'wire', version: '0' } },
      },
    );
    const headers = { 'content-type': 'application/json', accept, 'mcp-session-id': init.headers['mcp-session-id']! };
    expect((await post(d.url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    return headers;
  }

  // The fast path ends a cancelled call's stream at once; the SDK's transport keeps it open, with no
  // response, until the session (or the client) ends it. Either way no response is sent.
  it(`sends no response for a call its client cancelled, and ends its stream ${fastPath ? 'at once' : 'with its session'} (MCP cancellation)`, async () => {
    await deploy(d.url, 'cancelled', (await relayImage()).bytes);
    const headers = await openSession();
    const answer = post(d.url, headers, {
      jsonrpc: '2.0',
      id: 'spin',
      method: 'tools/call',
      params: { name: 'cancelled.spin', arguments: {} },
    });
    await d.waitForLog((e) => e.msg === SPIN_LOG.message && e.harness === 'cancelled');
    const cancel = await post(d.url, headers, {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'spin', reason: 'enough' },
    });
    expect(cancel.status).toBe(202);
    if (!fastPath) {
      await d.waitForLog((e) => e.msg === 'call cancelled by its caller' && e.harness === 'cancelled');
      expect((await post(d.url, headers, undefined, 'DELETE')).status).toBe(200);
    }
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
    await d.waitForLog((e) => e.msg === 'call cancelled by its caller' && e.harness === 'cancelled');
  });

  it('stops the calls of a session its client ends, ending their streams without a response', async () => {
    await deploy(d.url, 'ended', (await relayImage()).bytes);
    const headers = await openSession();
    const answer = post(d.url, headers, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'ended.spin', arguments: {} } });
    await d.waitForLog((e) => e.msg === SPIN_LOG.message && e.harness === 'ended');
    expect((await post(d.url, headers, undefined, 'DELETE')).status).toBe(200);
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
    await d.waitForLog((e) => e.msg === 'call cancelled by its caller' && e.harness === 'ended');
  });

  const malformed: Array<{ title: string; message: Record<string, unknown> }> = [
    { title: 'an id that is not an integer', message: { id: 1.5 } },
    { title: 'a member JSON-RPC does not define', message: { id: 'extra', extra: true } },
    { title: 'a _meta that is not an object', message: { id: 'meta', params: { name: 'basic.echo', _meta: 5 } } },
    {
      title: 'a progress token that is not a string or an integer',
      message: { id: 'token', params: { name: 'basic.echo', _meta: { progressToken: 0.5 } } },
    },
  ];
  for (const m of malformed) {
    it(`refuses what the SDK refuses, alone or in a batch: ${m.title}`, async () => {
      const message = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'basic.echo', arguments: {} }, ...m.message };
      // In a batch, the SDK's classification refuses it (an invalid request). Alone, with the fast path, it
      // is plainly 2025-era and the session's transport refuses it (a parse error); without, the
      // classification again. Either way it is a JSON-RPC error, and no call ran.
      for (const [body, code] of [
        [message, fastPath ? -32700 : -32600],
        [[message], -32600],
      ] as const) {
        const res = await post(d.url, base(), body);
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toBe('application/json');
        expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', error: { code } });
      }
      expect(d.log().filter((e) => e.msg === 'tools/call finished' && e.rpc_id === m.message.id)).toEqual([]);
    });
  }
});
