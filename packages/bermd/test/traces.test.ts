// bermd's traces end to end: real bermd processes exporting over OTLP/HTTP to a stand-in collector
// (otlp-receiver.ts) in both encodings, MCP clients of both generations, a loopback server standing in
// for the upstream a guest fetches from. A nested call chain with a fetch makes the spans the semantic
// conventions name, under the client's trace (from `_meta.traceparent` or the `traceparent` header), and
// the upstream joins it; a tool error is `error.type=tool_error`; a secret's value is in no span even
// with content recorded; a deploy's phases are spans; and a bermd told no endpoint traces nothing.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { httpImage } from '../../../test/helpers/guest.js';
import { removeDir, type RunningDaemon, startDaemon, tempDir } from './daemon.js';
import { connect, deploy, envelope, messages, modernHeaders, post, put } from './mcp-client.js';
import { OtlpReceiver, type ReceivedSpan, SPAN_KIND } from './otlp-receiver.js';
import { RemoteHost, resolvedTo } from './remote.js';

const SECRET = 'tok-7f3a-upstream-credential-e2b9';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const HEADER_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = '00f067aa0ba902b7';
const traceparent = (traceId: string) => `00-${traceId}-${PARENT_ID}-01`;

interface World {
  dir: string;
  remote: RemoteHost;
  api: string;
  secretsFile: string;
}

async function world(): Promise<World> {
  const remote = await RemoteHost.start();
  remote.route('/echo', (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  const dir = await tempDir('bermd-traces-');
  const secretsFile = path.join(dir, 'secrets.json');
  await writeFile(secretsFile, JSON.stringify({ upstream: { value: SECRET } }), { mode: 0o600 });
  return { dir, remote, api: `api.example.com:${remote.port}`, secretsFile };
}

async function bermd(w: World, env: Record<string, string>, extra: string[] = []): Promise<RunningDaemon> {
  const d = await startDaemon({
    stateDir: path.join(w.dir, `state-${Math.random().toString(36).slice(2)}`),
    args: ['--serve', 'berm.http.fetch', ...resolvedTo(w.remote, 'api.example.com'), '--secrets', w.secretsFile, ...extra],
    env,
  });
  await deploy(d.url, 'a', (await httpImage({ programs: ['b'] })).bytes);
  await deploy(d.url, 'b', (await httpImage({ fetch: [w.api], secrets: ['upstream'] })).bytes);
  return d;
}

/** The spans of trace `traceId`, once one named `name` has arrived among them. */
function traceWith(receiver: OtlpReceiver, traceId: string, name: string): Promise<ReceivedSpan[]> {
  return receiver.until((spans) => {
    const own = spans.filter((s) => s.traceId === traceId);
    return own.some((s) => s.name === name) ? own : undefined;
  });
}

/** A 2026-07-28 call of `a.call` on `d`, relaying to `b.fetch` of the upstream, under the trace `traceId`. */
async function fetchUnder(d: RunningDaemon, w: World, traceId: string): Promise<void> {
  await post(d.url, modernHeaders('tools/call', 'a.call'), {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'a.call',
      arguments: { program: 'b', tool: 'fetch', args: { url: `http://${w.api}/echo` } },
      _meta: envelope({ traceparent: traceparent(traceId) }),
    },
  });
}

/** Deploys `name` on `d`: a harness whose one tool, `fail`, answers the guest error "no". */
async function deployFailing(d: RunningDaemon, name: string): Promise<void> {
  await deploy(
    d.url,
    name,
    await harnessImage(manifestWithTools(['fail']), { tools: { fail: { kind: 'const', envelope: { error: 'no' } } } }),
  );
}

function one(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, `spans named ${name} among ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

describe('traces', { timeout: 60_000 }, () => {
  let w: World;
  let receiver: OtlpReceiver;
  let d: RunningDaemon;

  beforeAll(async () => {
    w = await world();
    receiver = await OtlpReceiver.start();
    d = await bermd(
      w,
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      },
      ['--otel-record-content', '--otel-service-name', 'bermd-under-test'],
    );
  });

  afterAll(async () => {
    await d?.stop();
    await receiver?.close();
    await w?.remote.close();
    await removeDir(w.dir);
  });

  it('continues a 2026-07-28 _meta.traceparent through a berm.call chain and its fetch, to the upstream', async () => {
    const args = { program: 'b', tool: 'fetch', args: { url: `http://${w.api}/echo?key=hidden-value` } };
    const res = await post(d.url, modernHeaders('tools/call', 'a.call'), {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'a.call', arguments: args, _meta: envelope({ traceparent: traceparent(TRACE_ID), tracestate: 'vendor=1' }) },
    });
    expect(res.status).toBe(200);
    const answer = messages(res)[0] as { result: { isError?: boolean } };
    expect(answer.result.isError).toBeUndefined();

    const spans = await traceWith(receiver, TRACE_ID, 'tools/call a.call');
    const server = one(spans, 'tools/call a.call');
    expect(server.kind).toBe(SPAN_KIND.server);
    expect(server.parentSpanId).toBe(PARENT_ID);
    expect(server.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'a.call',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': '2026-07-28',
      'jsonrpc.request.id': '7',
      'network.transport': 'tcp',
      // From the request's Host header.
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(d.url).port),
    });
    expect(server.attributes['mcp.session.id']).toBeUndefined();
    expect(server.attributes['error.type']).toBeUndefined();
    expect(server.resource).toMatchObject({ 'service.name': 'bermd-under-test', 'deployment.environment.name': 'test' });

    // Each span of the chain hangs under the one that made it.
    const queue = one(spans, 'bermd.queue');
    const run = one(spans, 'bermd.run a.call');
    const nested = one(spans, 'berm.call b.fetch');
    expect(queue.parentSpanId).toBe(server.spanId);
    expect(run.parentSpanId).toBe(server.spanId);
    expect(nested.parentSpanId).toBe(run.spanId);
    expect(nested.attributes).toMatchObject({ 'berm.harness': 'b', 'berm.tool': 'fetch', 'berm.call.depth': 1 });
    const instances = spans.filter((s) => s.name === 'bermd.instantiate');
    expect(instances.map((s) => [s.parentSpanId, s.attributes['berm.harness']]).sort()).toEqual(
      [
        [run.spanId, 'a'],
        [nested.spanId, 'b'],
      ].sort(),
    );
    // The wait ends as the run begins; the call's own instance is made within its run, before the nested call.
    expect(queue.attributes).toEqual({ 'berm.harness': 'a' });
    expect(queue.startNanos).toBeLessThanOrEqual(queue.endNanos);
    expect(queue.endNanos).toBe(run.startNanos);
    const own = instances.find((s) => s.parentSpanId === run.spanId)!;
    expect(own.attributes).toEqual({ 'berm.harness': 'a', 'berm.tool': 'call', 'berm.call.depth': 0 });
    expect(own.startNanos).toBeGreaterThanOrEqual(run.startNanos);
    expect(own.endNanos).toBeLessThanOrEqual(nested.startNanos);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);

    const fetch = one(spans, 'GET');
    expect(fetch.kind).toBe(SPAN_KIND.client);
    expect(fetch.parentSpanId).toBe(nested.spanId);
    expect(fetch.attributes).toMatchObject({
      'http.request.method': 'GET',
      'server.address': 'api.example.com',
      'server.port': w.remote.port,
      'url.full': `http://${w.api}/echo?key=REDACTED`,
      'http.response.status_code': 200,
    });

    // The upstream joined the trace, with the fetch's span as its parent, and tracestate carried along.
    const seen = w.remote.seen.find((r) => String(r.headers.traceparent ?? '').includes(TRACE_ID));
    expect(seen?.headers.traceparent).toBe(`00-${TRACE_ID}-${fetch.spanId}-01`);
    expect(seen?.headers.tracestate).toBe('vendor=1');
  });

  it('continues the traceparent header of a 2025 session, and names the session', async () => {
    const c = await connect(d.url, { traceparent: traceparent(HEADER_TRACE_ID) });
    try {
      const result = await c.client.callTool({
        name: 'a.call',
        arguments: { program: 'b', tool: 'fetch', args: { url: `http://${w.api}/echo` } },
      });
      expect(result.isError).toBeFalsy();
      const spans = await traceWith(receiver, HEADER_TRACE_ID, 'tools/call a.call');
      const server = one(spans, 'tools/call a.call');
      expect(server.parentSpanId).toBe(PARENT_ID);
      expect(server.attributes['mcp.session.id']).toBe(c.transport.sessionId);
      expect(server.attributes['mcp.protocol.version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      // The session's other requests are spans of their own, named after their method.
      expect(spans.some((s) => s.name === 'initialize' && s.kind === SPAN_KIND.server)).toBe(true);
    } finally {
      await c.close();
    }
  });

  it('hangs the spans of a call the SDK answers (one asking for progress) under its request, in both generations', async () => {
    const modern = 'cccc1111cccc1111cccc1111cccc1111';
    const res = await post(d.url, modernHeaders('tools/call', 'a.call'), {
      jsonrpc: '2.0',
      id: 'progress',
      method: 'tools/call',
      params: {
        name: 'a.call',
        arguments: { program: 'b', tool: 'fetch', args: { url: `http://${w.api}/echo?progress` } },
        _meta: envelope({ traceparent: traceparent(modern), progressToken: 'p1' }),
      },
    });
    expect(res.status).toBe(200);
    const c = await connect(d.url, { traceparent: traceparent('cccc2222cccc2222cccc2222cccc2222') });
    try {
      const result = await c.client.callTool(
        { name: 'a.call', arguments: { program: 'b', tool: 'fetch', args: { url: `http://${w.api}/echo?legacy-progress` } } },
        undefined,
        { onprogress: () => {} },
      );
      expect(result.isError).toBeFalsy();
    } finally {
      await c.close();
    }
    for (const traceId of [modern, 'cccc2222cccc2222cccc2222cccc2222']) {
      // The request's span ends last, once its answer is sent: with it in, the call's spans are too.
      const spans = await traceWith(receiver, traceId, 'tools/call a.call');
      const server = one(spans, 'tools/call a.call');
      const run = one(spans, 'bermd.run a.call');
      expect(run.parentSpanId).toBe(server.spanId);
      expect(one(spans, 'berm.call b.fetch').parentSpanId).toBe(run.spanId);
      expect(one(spans, 'GET').parentSpanId).toBe(one(spans, 'berm.call b.fetch').spanId);
    }
  });

  it("records nothing of a call its client's unsampled trace drops, and hands its fetch the trace's context, unsampled", async () => {
    const dropped = 'dddd0000dddd0000dddd0000dddd0000';
    const args = { program: 'b', tool: 'fetch', args: { url: `http://${w.api}/echo?dropped` } };
    await post(d.url, modernHeaders('tools/call', 'a.call'), {
      jsonrpc: '2.0',
      id: 'dropped',
      method: 'tools/call',
      params: { name: 'a.call', arguments: args, _meta: envelope({ traceparent: `00-${dropped}-${PARENT_ID}-00` }) },
    });
    const seen = w.remote.seen.find((r) => r.url === '/echo?dropped');
    expect(seen?.headers.traceparent).toMatch(new RegExp(`^00-${dropped}-[0-9a-f]{16}-00$`));
    // A sampled call made after it: once its spans are in, any of the dropped call's would be too.
    const kept = 'eeee0000eeee0000eeee0000eeee0000';
    await post(d.url, modernHeaders('tools/call', 'a.call'), {
      jsonrpc: '2.0',
      id: 'kept',
      method: 'tools/call',
      params: { name: 'a.call', arguments: args, _meta: envelope({ traceparent: traceparent(kept) }) },
    });
    const spans = await traceWith(receiver, kept, 'tools/call a.call');
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['bermd.run a.call', 'bermd.instantiate', 'berm.call b.fetch', 'GET']));
    expect(receiver.spans.filter((s) => s.traceId === dropped)).toEqual([]);
  });

  it('prefers _meta.traceparent to the header when a request carries both', async () => {
    const traceId = 'aaaabbbbccccddddeeeeffff00001111';
    const headers = { ...modernHeaders('tools/call', 'a.call'), traceparent: traceparent(HEADER_TRACE_ID) };
    await post(d.url, headers, {
      jsonrpc: '2.0',
      id: 'both',
      method: 'tools/call',
      params: { name: 'a.call', arguments: { program: 'b', tool: 'missing' }, _meta: envelope({ traceparent: traceparent(traceId) }) },
    });
    const spans = await traceWith(receiver, traceId, 'tools/call a.call');
    expect(one(spans, 'tools/call a.call').attributes['jsonrpc.request.id']).toBe('both');
  });

  it('marks a tool error error.type=tool_error, and a JSON-RPC error with its code', async () => {
    await deployFailing(d, 'f');
    const traceId = '11112222333344445555666677778888';
    const res = await post(d.url, modernHeaders('tools/call', 'f.fail'), {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'f.fail', arguments: { query: 'x' }, _meta: envelope({ traceparent: traceparent(traceId) }) },
    });
    expect(res.body).toContain('guest-error');
    const failed = one(await traceWith(receiver, traceId, 'tools/call f.fail'), 'tools/call f.fail');
    expect(failed.attributes['error.type']).toBe('tool_error');
    expect(failed.status.code).toBe(2);
    expect(one(await traceWith(receiver, traceId, 'bermd.run f.fail'), 'bermd.run f.fail').attributes['error.type']).toBe('guest-error');

    const unknownId = '99998888777766665555444433332222';
    await post(d.url, modernHeaders('tools/call', 'nobody.here'), {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'nobody.here', arguments: {}, _meta: envelope({ traceparent: traceparent(unknownId) }) },
    });
    const unknown = one(await traceWith(receiver, unknownId, 'tools/call nobody.here'), 'tools/call nobody.here');
    expect(unknown.attributes['error.type']).toBe('-32602');
    expect(unknown.status.code).toBe(2);
  });

  it('marks a tool error and a JSON-RPC error on a 2025 session as on 2026-07-28, the result recorded as answered', async () => {
    await deployFailing(d, 'g');
    const traceId = '2025aaaa2025bbbb2025cccc2025dddd';
    const c = await connect(d.url, { traceparent: traceparent(traceId) });
    try {
      const result = await c.client.callTool({ name: 'g.fail', arguments: { query: 'x' } });
      expect(result.isError).toBe(true);
      await expect(c.client.callTool({ name: 'nobody.there', arguments: {} })).rejects.toThrow(/nobody\.there/);
      const failed = one(await traceWith(receiver, traceId, 'tools/call g.fail'), 'tools/call g.fail');
      expect(failed.attributes['error.type']).toBe('tool_error');
      expect(failed.status.code).toBe(2);
      expect(failed.status.message).toContain('no');
      expect(JSON.parse(String(failed.attributes['gen_ai.tool.call.result']))).toEqual(result);
      const unknown = one(await traceWith(receiver, traceId, 'tools/call nobody.there'), 'tools/call nobody.there');
      expect(unknown.attributes['error.type']).toBe('-32602');
      expect(unknown.status.code).toBe(2);
    } finally {
      await c.close();
    }
  });

  it("reads the outcome of an answer nobody tells it: the SDK's, and a refusal written before any answerer", async () => {
    await deployFailing(d, 'h');
    // Asking for progress sends the call through the SDK, which writes its answer itself.
    const sdkTrace = 'dddd1111dddd1111dddd1111dddd1111';
    const res = await post(d.url, modernHeaders('tools/call', 'h.fail'), {
      jsonrpc: '2.0',
      id: 'sdk',
      method: 'tools/call',
      params: { name: 'h.fail', arguments: { query: 'x' }, _meta: envelope({ traceparent: traceparent(sdkTrace), progressToken: 'p' }) },
    });
    expect(res.body).toContain('guest-error');
    const failed = one(await traceWith(receiver, sdkTrace, 'tools/call h.fail'), 'tools/call h.fail');
    expect(failed.attributes['error.type']).toBe('tool_error');
    expect(failed.status.code).toBe(2);
    expect(failed.status.message).toContain('no');

    // A session bermd does not hold is refused before any answerer, with a status and no id of the request's.
    const goneTrace = 'dddd2222dddd2222dddd2222dddd2222';
    const gone = await post(
      d.url,
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': 'no-such-session',
        traceparent: traceparent(goneTrace),
      },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'h.fail', arguments: { query: 'x' } } },
    );
    expect(gone.status).toBe(404);
    const refused = one(await traceWith(receiver, goneTrace, 'tools/call h.fail'), 'tools/call h.fail');
    expect(refused.attributes['error.type']).toBe('404');
    expect(refused.status.code).toBe(2);
  });

  it('records arguments and results when asked, and never a secret value', async () => {
    const traceId = 'cccc0000cccc0000cccc0000cccc0000';
    // The secret goes out in a header by reference, and a careless caller also puts its value in the arguments.
    const args = {
      program: 'b',
      tool: 'fetch',
      args: { url: `http://${w.api}/echo`, headers: { authorization: 'Bearer {secret:upstream}', 'x-note': SECRET } },
    };
    await post(d.url, modernHeaders('tools/call', 'a.call'), {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'a.call', arguments: args, _meta: envelope({ traceparent: traceparent(traceId) }) },
    });
    const spans = await traceWith(receiver, traceId, 'tools/call a.call');
    const server = one(spans, 'tools/call a.call');
    expect(server.attributes['gen_ai.tool.call.arguments']).toContain('{secret:upstream}');
    expect(server.attributes['gen_ai.tool.call.result']).toContain('"status');
    // The upstream did receive the value: it was sent, and it is in no span.
    expect(w.remote.seen.some((r) => r.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
    await d.stop();
    expect(JSON.stringify(receiver.spans, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(SECRET);
    d = await bermd(w, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' });
  });

  it("makes a deploy a SERVER span with its phases as children, and its log line carries the trace's ids", async () => {
    const traceId = 'eeee0000eeee0000eeee0000eeee0000';
    const bytes = (await httpImage({ programs: ['b'] })).bytes;
    const res = await put(`${d.url}/harnesses/traced`, bytes, { traceparent: traceparent(traceId) });
    expect(res.status).toBe(201);
    const again = await put(`${d.url}/harnesses/traced`, bytes, { traceparent: traceparent(traceId) });
    expect(again.status).toBe(200);
    const spans = await receiver.until((all) => {
      const own = all.filter((s) => s.traceId === traceId);
      return own.filter((s) => s.name === 'PUT /harnesses/:name').length === 2 && own.some((s) => s.name === 'bermd.deploy.gate')
        ? own
        : undefined;
    });
    const [first, second] = spans.filter((s) => s.name === 'PUT /harnesses/:name');
    for (const request of [first!, second!]) {
      expect(request.kind).toBe(SPAN_KIND.server);
      expect(request.parentSpanId).toBe(PARENT_ID);
      expect(request.attributes).toMatchObject({ 'http.request.method': 'PUT', 'http.route': '/harnesses/:name' });
    }
    expect(first!.attributes['http.response.status_code']).toBe(201);
    const phases = (request: ReceivedSpan) => spans.filter((s) => s.parentSpanId === request.spanId).map((s) => s.name);
    expect(phases(first!)).toEqual(
      expect.arrayContaining(['bermd.deploy.read', 'bermd.deploy.compile', 'bermd.deploy.checks', 'bermd.deploy.commit']),
    );
    // The gate compares with what was there: the second deploy's.
    expect(phases(second!)).toContain('bermd.deploy.gate');
    const line = await d.waitForLog((e) => e.msg === 'deployed harness' && e.harness === 'traced' && e.trace_id === traceId);
    expect([first!.spanId, second!.spanId]).toContain(line.span_id);
  });

  it('exports in http/json when asked, the flag winning over the variable', async () => {
    const json = await OtlpReceiver.start();
    const elsewhere = await OtlpReceiver.start();
    const j = await bermd(
      w,
      { OTEL_EXPORTER_OTLP_ENDPOINT: elsewhere.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_BSP_SCHEDULE_DELAY: '50' },
      ['--otel-exporter-otlp-endpoint', json.url, '--otel-exporter-otlp-protocol', 'http/json'],
    );
    try {
      const traceId = 'dddd0000dddd0000dddd0000dddd0000';
      await fetchUnder(j, w, traceId);
      const spans = await traceWith(json, traceId, 'GET');
      expect(one(spans, 'GET').kind).toBe(SPAN_KIND.client);
      expect(json.encodings.every((t) => t.startsWith('application/json'))).toBe(true);
      await j.stop();
      expect(elsewhere.spans).toEqual([]);
    } finally {
      await j.stop();
      await json.close();
      await elsewhere.close();
    }
  });

  it('sends the spans it still holds when it stops, before it exits', async () => {
    const held = await OtlpReceiver.start();
    // The batch processor's own delay (5 s): nothing is sent before the stop but for the stop.
    const s = await bermd(w, { OTEL_EXPORTER_OTLP_ENDPOINT: held.url });
    try {
      const traceId = 'eeee0000eeee0000eeee0000eeee0000';
      await fetchUnder(s, w, traceId);
      await s.stop();
      const names = held.spans.filter((span) => span.traceId === traceId).map((span) => span.name);
      expect(names).toEqual(expect.arrayContaining(['tools/call a.call', 'bermd.run a.call', 'berm.call b.fetch', 'GET']));
    } finally {
      await s.stop();
      await held.close();
    }
  });

  it('traces nothing and sends no traceparent without an endpoint', async () => {
    const off = await bermd(w, { OTEL_BSP_SCHEDULE_DELAY: '50' });
    try {
      const marker = '/echo?untraced=1';
      await post(off.url, modernHeaders('tools/call', 'a.call'), {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'a.call',
          arguments: { program: 'b', tool: 'fetch', args: { url: `http://${w.api}${marker}` } },
          _meta: envelope({ traceparent: traceparent(TRACE_ID) }),
        },
      });
      const seen = w.remote.seen.find((r) => r.url === marker);
      expect(seen).toBeDefined();
      expect(seen!.headers.traceparent).toBeUndefined();
      expect(off.stderr()).not.toMatch(/trace/i);
    } finally {
      await off.stop();
    }
  });

  it('exports nothing with OTEL_SDK_DISABLED=true, the endpoint set', async () => {
    const quiet = await OtlpReceiver.start();
    const off = await bermd(w, { OTEL_EXPORTER_OTLP_ENDPOINT: quiet.url, OTEL_SDK_DISABLED: 'true', OTEL_BSP_SCHEDULE_DELAY: '50' });
    try {
      const c = await connect(off.url, { traceparent: traceparent(TRACE_ID) });
      await c.client.callTool({ name: 'a.call', arguments: { program: 'b', tool: 'fetch', args: { url: `http://${w.api}/echo` } } });
      await c.close();
      // Stopping flushes whatever a tracer would hold: none was made.
      await off.stop();
      expect(quiet.spans).toEqual([]);
      expect(quiet.encodings).toEqual([]);
    } finally {
      await off.stop();
      await quiet.close();
    }
  });
});
