// /mcp end to end: a real bermd process, spoken to over Streamable HTTP by the MCP SDK's clients of both
// protocol generations: the 1.x client (2025-11-25, sessions) and the v2 client pinned to 2026-07-28
// (stateless). Notifications are awaited through promises their handlers resolve; nothing here sleeps.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { LOG_LEVEL_META_KEY, ProtocolError } from '@modelcontextprotocol/client';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManifestData } from '@berm/manifest';
import { FAIL_MESSAGE, FORECAST_LOG, SPIN_LOG, basicImage, relayImage } from '../../../test/helpers/guest.js';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import {
  connect,
  connectModern,
  deploy,
  envelope,
  MODERN,
  modernHeaders,
  textOf,
  undeploy,
  valueOf,
  type McpConnection,
  type ModernConnection,
} from './mcp-client.js';

/** One harness per way a tool is listed: an object result (query), a deprecated one with a string result, one that breaks its own schema. */
function sampleTools(): ManifestData {
  const base = sampleManifest();
  return {
    ...base,
    usage: '# sample\n\nCall `echo` with a query; it answers the query.',
    tools: [
      base.tools[0]!,
      { name: 'old', description: 'Answers a string.', arguments: { type: 'object' }, returns: { type: 'string' }, deprecated: true },
      {
        name: 'liar',
        description: 'Declares an object with a query and answers another.',
        arguments: { type: 'object' },
        returns: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
    ],
  };
}

async function call(c: McpConnection, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await c.client.callTool({ name, arguments: args })) as CallToolResult;
}

async function lastUsed(url: string, name: string): Promise<string | null> {
  const res = await fetch(`${url}/harnesses/${name}`);
  return ((await res.json()) as { last_used_at: string | null }).last_used_at;
}

/** Unwraps `{"ok": {"ok": ... {"refused": ...}}}`: how many levels of a chain answered before the one that was refused. */
function chainDepth(value: unknown): { levels: number; end: Record<string, unknown> } {
  let levels = 0;
  let v = value as Record<string, unknown>;
  while ('ok' in v) {
    v = v.ok as Record<string, unknown>;
    levels++;
  }
  return { levels, end: v };
}

describe('bermd /mcp', () => {
  let d: RunningDaemon;
  let c: McpConnection;

  beforeAll(async () => {
    // A time limit far beyond any test's, so that only a cancellation stops the spinning guest below.
    // Lines long enough for the 100 concurrent calls of one harness below (64 wait at most by default).
    d = await startDaemon({ args: ['--call-timeout', '2m', '--max-queue', '256'] });
    await deploy(d.url, 'basic', (await basicImage()).bytes);
    await deploy(d.url, 'inner', (await basicImage()).bytes);
    await deploy(d.url, 'relay', (await relayImage(['inner', 'ghost'])).bytes);
    await deploy(
      d.url,
      'sample',
      await harnessImage(sampleTools(), {
        tools: { old: { kind: 'const', envelope: { ok: 'then' } }, liar: { kind: 'const', envelope: { ok: { nope: 1 } } } },
      }),
    );
    c = await connect(d.url);
  });
  afterAll(async () => {
    await c?.close();
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  it('says who it is and what it offers, with a one-sentence instructions', () => {
    expect(c.client.getServerVersion()).toMatchObject({ name: 'bermd' });
    expect(c.client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, resources: { listChanged: true }, logging: {} });
    const instructions = c.client.getInstructions()!;
    expect(instructions).toContain('{harness}.{tool}');
    expect(instructions.match(/[.;]\s/g)?.length ?? 0).toBeLessThanOrEqual(1);
    expect(instructions.trim().split(/(?<=[.!?])\s+(?=[A-Z])/)).toHaveLength(1);
  });

  it('lists every tool as {harness}.{tool} with its schemas, hints, deprecation, and the harness and tool it stands for', async () => {
    const { tools } = await c.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(
      expect.arrayContaining([
        'basic.echo',
        'basic.trap',
        'inner.echo',
        'relay.emit',
        'relay.forecast',
        'sample.echo',
        'sample.old',
        'sample.liar',
      ]),
    );
    // Other tests deploy harnesses of their own: these four are the ones deployed for the whole file.
    expect(names.filter((n) => /^(basic|inner|relay|sample)\./.test(n))).toHaveLength(8 + 8 + 7 + 3);
    const byName = new Map(tools.map((t) => [t.name, t]));
    const manifest = sampleTools();
    expect(byName.get('sample.echo')).toEqual({
      name: 'sample.echo',
      description: 'Returns its query.',
      inputSchema: manifest.tools[0]!.arguments,
      outputSchema: manifest.tools[0]!.returns,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      _meta: { 'berm/harness': 'sample', 'berm/tool': 'echo' },
    });
    // A string result is no output schema: MCP's outputSchema is an object schema.
    expect(byName.get('sample.old')).toEqual({
      name: 'sample.old',
      description: 'Deprecated. Answers a string.',
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: false, openWorldHint: false },
      _meta: { 'berm/harness': 'sample', 'berm/tool': 'old' },
    });
    // The manifest's uint32 is the range it means: no client knows the format.
    expect(byName.get('relay.forecast')!.inputSchema).toEqual({
      type: 'object',
      properties: { days: { type: 'integer', minimum: 0, maximum: 4294967295 } },
      required: ['days'],
    });
    expect(byName.get('basic.echo')!.outputSchema).toBeUndefined();
  });

  it('calls a tool: the JSON as text, and structuredContent when it declares an object result', async () => {
    const structured = await call(c, 'sample.echo', { query: 'héllo' });
    expect(structured.isError).toBeFalsy();
    expect(JSON.parse(textOf(structured))).toEqual({ query: 'héllo' });
    expect(structured.structuredContent).toEqual({ query: 'héllo' });

    const plain = await call(c, 'sample.old');
    expect(valueOf(plain)).toBe('then');
    expect(plain.structuredContent).toBeUndefined();
    expect(valueOf(await call(c, 'basic.echo', { n: [1, 2], s: 'x' }))).toEqual({ n: [1, 2], s: 'x' });
  });

  it('answers a failing guest as a tool result with isError and a message', async () => {
    const fail = await call(c, 'basic.fail');
    expect(fail.isError).toBe(true);
    expect(textOf(fail)).toBe(FAIL_MESSAGE);
    expect(fail._meta).toEqual({ 'berm/error': { code: 'guest-error' } });

    const trap = await call(c, 'basic.trap');
    expect(trap.isError).toBe(true);
    expect(textOf(trap)).toMatch(/^basic\.trap trapped: .*unreachable/);

    const huge = await call(c, 'basic.huge');
    expect(huge.isError).toBe(true);
    expect(textOf(huge)).toMatch(/above the limit of 1048576/);

    // A result its own returns schema does not allow never reaches the client as structuredContent.
    const liar = await call(c, 'sample.liar');
    expect(liar.isError).toBe(true);
    expect(liar.structuredContent).toBeUndefined();
    expect(textOf(liar)).toMatch(/^sample\.liar answered a value its declared returns schema does not allow: result \/query is required/);
  });

  it('refuses bad arguments as a tool result naming the path, before the guest runs', async () => {
    // A harness of its own, which no other test calls.
    await deploy(d.url, 'strict', (await relayImage()).bytes);
    expect(await lastUsed(d.url, 'strict')).toBeNull();
    const bad = await call(c, 'strict.forecast', { days: 'soon' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toBe('strict.forecast: argument /days must be integer');
    expect(bad._meta).toEqual({ 'berm/error': { code: 'invalid-arguments', path: '/days' } });
    const missing = await call(c, 'strict.forecast', {});
    expect(textOf(missing)).toContain('argument /days is required');
    // Nothing ran: the harness is still unused, and its only forecast log line is the valid call's,
    // written before that call answered (so an earlier line would have been read before it).
    expect(await lastUsed(d.url, 'strict')).toBeNull();
    expect(valueOf(await call(c, 'strict.forecast', { days: 3 }))).toEqual({ days: 3 });
    const mine = (e: Record<string, unknown>): boolean => e.msg === FORECAST_LOG.message && e.harness === 'strict';
    await d.waitForLog(mine);
    expect(d.log().filter(mine)).toEqual([expect.objectContaining({ tool: 'forecast', guest: true, level: 30 })]);
    expect(await lastUsed(d.url, 'strict')).not.toBeNull();
  });

  it('answers an unknown tool with a protocol error', async () => {
    const error = await c.client.callTool({ name: 'basic.nothing', arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toContain('Unknown tool: basic.nothing');
    const noHarness = await c.client.callTool({ name: 'nobody.echo', arguments: {} }).catch((e: unknown) => e);
    expect((noHarness as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it('publishes each non-empty usage as berm://{harness}/usage', async () => {
    const { resources } = await c.client.listResources();
    // Other tests deploy harnesses of their own; of the four deployed for the whole file, only sample has a usage.
    expect(resources.filter((r) => /^berm:\/\/(basic|inner|relay|sample)\//.test(r.uri))).toEqual([
      { uri: 'berm://sample/usage', name: 'sample usage', description: expect.stringContaining('sample'), mimeType: 'text/markdown' },
    ]);
    const read = await c.client.readResource({ uri: 'berm://sample/usage' });
    expect(read.contents).toEqual([{ uri: 'berm://sample/usage', mimeType: 'text/markdown', text: sampleTools().usage }]);
    // basic has an empty usage: no resource. MCP 2026-07-28's code for it, which the SDK sends to every generation.
    const missing = await c.client.readResource({ uri: 'berm://basic/usage' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(McpError);
    expect((missing as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((missing as McpError).data).toEqual({ uri: 'berm://basic/usage' });
  });

  it('tells connected sessions when a deploy or an undeploy changes the lists', async () => {
    // Sessions of its own, which have heard of no other test's deploys: each notice awaited is this test's.
    const [one, other] = await Promise.all([connect(d.url), connect(d.url)]);
    try {
      const tools = [one.toolsChanged.next(), other.toolsChanged.next()];
      const resources = [one.resourcesChanged.next(), other.resourcesChanged.next()];
      await deploy(d.url, 'late', await harnessImage(sampleManifest({ usage: 'Late usage.' })));
      await Promise.all([...tools, ...resources]);
      expect((await other.client.listTools()).tools.map((t) => t.name)).toContain('late.echo');
      expect((await other.client.listResources()).resources.map((r) => r.uri)).toContain('berm://late/usage');

      const gone = [one.toolsChanged.next(), other.toolsChanged.next(), other.resourcesChanged.next()];
      await undeploy(d.url, 'late');
      await Promise.all(gone);
      expect((await one.client.listTools()).tools.map((t) => t.name)).not.toContain('late.echo');
      expect((await other.client.listResources()).resources.map((r) => r.uri)).not.toContain('berm://late/usage');
      const stale = await one.client.callTool({ name: 'late.echo', arguments: { query: 'q' } }).catch((e: unknown) => e);
      expect((stale as McpError).code).toBe(ErrorCode.InvalidParams);
    } finally {
      await Promise.all([one.close(), other.close()]);
    }
  });

  describe('berm.call', () => {
    it('reaches a declared program and records its use', async () => {
      // A pair of its own, which no other test calls.
      await deploy(d.url, 'target', (await basicImage()).bytes);
      await deploy(d.url, 'caller', (await relayImage(['target'])).bytes);
      expect(await lastUsed(d.url, 'target')).toBeNull();
      expect(valueOf(await call(c, 'caller.call', { program: 'target', tool: 'echo', args: { x: 1 } }))).toEqual({ ok: { x: 1 } });
      expect(await lastUsed(d.url, 'target')).not.toBeNull();
    });

    it('refuses a program that is not declared, not deployed, or a tool it lacks', async () => {
      const undeclared = valueOf(await call(c, 'relay.call', { program: 'basic', tool: 'echo', args: {} })) as { refused: string };
      expect(undeclared.refused).toMatch(/"basic" is neither "relay" itself nor declared in its deps\.programs/);
      const ghost = valueOf(await call(c, 'relay.call', { program: 'ghost', tool: 'echo', args: {} })) as { refused: string };
      expect(ghost.refused).toMatch(/"ghost" is not deployed/);
      const noTool = valueOf(await call(c, 'relay.call', { program: 'inner', tool: 'nothing', args: {} })) as { refused: string };
      expect(noTool.refused).toMatch(/has no tool "nothing"/);
    });

    it('answers a target that ran and failed as failed', async () => {
      expect(valueOf(await call(c, 'relay.call', { program: 'inner', tool: 'fail', args: {} }))).toEqual({ failed: FAIL_MESSAGE });
      const trapped = valueOf(await call(c, 'relay.call', { program: 'inner', tool: 'trap', args: {} })) as { failed: string };
      expect(trapped.failed).toMatch(/inner\.trap trapped/);
    });

    it('stops a chain at the default depth limit of 4', async () => {
      const { levels, end } = chainDepth(valueOf(await call(c, 'relay.chain', { program: 'relay' })));
      expect(levels).toBe(4);
      expect(end.refused).toMatch(/depth limit \(4\)/);
    });
  });

  describe('berm.emit and berm.log', () => {
    let watcher: McpConnection;
    let picky: McpConnection;
    let silent: McpConnection;
    let caller: McpConnection;

    let ticking = false;
    /**
     * One list change, awaited by every watching session: once told of it, a session's stream is open
     * and everything sent to it before the change has arrived (one stream keeps its order).
     */
    async function syncStreams(): Promise<void> {
      const told = [watcher, picky, silent].map((s) => s.toolsChanged.next());
      if (ticking) await undeploy(d.url, 'tick');
      else await deploy(d.url, 'tick', await harnessImage(sampleManifest()));
      ticking = !ticking;
      await Promise.all(told);
    }

    beforeAll(async () => {
      [watcher, picky, silent, caller] = await Promise.all([connect(d.url), connect(d.url), connect(d.url), connect(d.url)]);
      await watcher.client.setLoggingLevel('debug');
      await picky.client.setLoggingLevel('warning');
      await caller.client.setLoggingLevel('info');
      await syncStreams();
    });
    afterAll(async () => {
      await Promise.all([watcher, picky, silent, caller].map((s) => s?.close()));
    });

    /** How many messages each session had received: each test counts from there. */
    const counts = (): number[] => [watcher, picky, silent, caller].map((s) => s.messages.received.length);

    it('sends an accepted event to the sessions that asked for logs at its level, and logs it', async () => {
      const [w, p, s, k] = counts();
      const arrived = watcher.messages.next();
      const result = await call(caller, 'relay.emit', { event: 'reading', fields: { celsius: 21.5 } });
      expect(valueOf(result)).toEqual({ ok: null });
      const expected = { level: 'notice', logger: 'relay', data: { event: 'reading', fields: { celsius: 21.5 }, tool: 'emit' } };
      // The caller's copy travels with its call, ahead of the result.
      expect(caller.messages.received.slice(k)).toEqual([expected]);
      await arrived;
      expect(watcher.messages.received.slice(w)).toEqual([expected]);
      await d.waitForLog((e) => e.msg === 'event' && e.harness === 'relay' && e.tool === 'emit' && e.event === 'reading');

      // Anything sent to the other two would have arrived before the next list change.
      await syncStreams();
      expect(picky.messages.received.slice(p)).toEqual([]);
      expect(silent.messages.received.slice(s)).toEqual([]);
    });

    it('refuses an undeclared event or fields that do not match, and sends nothing', async () => {
      const undeclared = valueOf(await call(caller, 'relay.emit', { event: 'nope', fields: {} })) as { refused: string };
      expect(undeclared.refused).toMatch(/event "nope" is not declared by "relay"/);
      const mismatched = valueOf(await call(caller, 'relay.emit', { event: 'reading', fields: { celsius: 'warm' } })) as {
        refused: string;
      };
      expect(mismatched.refused).toMatch(/field \/celsius must be number/);
      const before = counts();
      await syncStreams();
      expect(counts()).toEqual(before);
    });

    it("sends a 2026-07-28 caller's event with its call when the call asks, and to the 2025 sessions that asked", async () => {
      const modern = await connectModern(d.url);
      try {
        const [w, p, s] = counts();
        const arrived = watcher.messages.next();
        const expected = { level: 'notice', logger: 'relay', data: { event: 'reading', fields: { celsius: 7 }, tool: 'emit' } };
        const asked = await modern.client.callTool({
          name: 'relay.emit',
          arguments: { event: 'reading', fields: { celsius: 7 } },
          _meta: { [LOG_LEVEL_META_KEY]: 'notice' },
        });
        expect(valueOf(asked)).toEqual({ ok: null });
        // It travels on the call's own answer, ahead of the result.
        expect(modern.messages.received).toEqual([expected]);
        await arrived;
        expect(watcher.messages.received.slice(w)).toEqual([expected]);
        // A call that does not ask gets none (2026-07-28 sends logs only to a request that asks).
        expect(
          valueOf(await modern.client.callTool({ name: 'relay.emit', arguments: { event: 'reading', fields: { celsius: 8 } } })),
        ).toEqual({
          ok: null,
        });
        expect(modern.messages.received).toHaveLength(1);
        await syncStreams();
        expect(picky.messages.received.slice(p)).toEqual([]);
        expect(silent.messages.received.slice(s)).toEqual([]);
      } finally {
        await modern.close();
      }
    });

    it("sends a call's berm.log lines to its own session at the level it set, and to no other", async () => {
      const [w, p, s, k] = counts();
      expect(valueOf(await call(caller, 'relay.log', { level: 'warn', message: 'hot' }))).toEqual({ ok: null });
      // Below the caller's `info`: not sent.
      expect(valueOf(await call(caller, 'relay.log', { level: 'debug', message: 'quiet' }))).toEqual({ ok: null });
      // The guest's alias is sent at MCP's name, and kept in `data`; the line travels with its call, ahead of the result.
      expect(caller.messages.received.slice(k)).toEqual([
        { level: 'warning', logger: 'relay', data: { tool: 'log', level: 'warn', message: 'hot' } },
      ]);
      await syncStreams();
      expect([watcher, picky, silent].map((c, i) => c.messages.received.slice([w, p, s][i]))).toEqual([[], [], []]);
    });

    it("sends a 2026-07-28 call's berm.log lines with its answer at the level its _meta asks, and none when it asks for none", async () => {
      const modern = await connectModern(d.url);
      try {
        const line = { level: 'trace', message: 'every step' };
        const asking = (level: string) => ({ name: 'relay.log', arguments: line, _meta: { [LOG_LEVEL_META_KEY]: level } });
        expect(valueOf(await modern.client.callTool(asking('debug')))).toEqual({ ok: null });
        expect(modern.messages.received).toEqual([
          { level: 'debug', logger: 'relay', data: { tool: 'log', level: 'trace', message: 'every step' } },
        ]);
        expect(valueOf(await modern.client.callTool(asking('info')))).toEqual({ ok: null });
        expect(valueOf(await modern.client.callTool({ name: 'relay.log', arguments: line }))).toEqual({ ok: null });
        expect(modern.messages.received).toHaveLength(1);
      } finally {
        await modern.close();
      }
    });

    it('writes berm.log lines to the daemon log, tagged with harness and tool', async () => {
      expect(valueOf(await call(caller, 'relay.log', { level: 'warning', message: 'mind the gap' }))).toEqual({ ok: null });
      const entry = await d.waitForLog((e) => e.msg === 'mind the gap');
      expect(entry).toMatchObject({ harness: 'relay', tool: 'log', guest: true, level: 40 });
    });

    it('writes a guest line holding DEL and C1 escaped, so a terminal showing the log runs no sequence from it', async () => {
      // U+009B is CSI to a terminal that reads C1: this one would turn the text red.
      const message = 'csi \u009b31m del \u007f nel \u0085 end';
      expect(valueOf(await call(caller, 'relay.log', { level: 'info', message }))).toEqual({ ok: null });
      expect(await d.waitForLog((e) => e.msg === message)).toMatchObject({ harness: 'relay', tool: 'log', guest: true });
      expect(d.stderr()).not.toMatch(/[\u007f-\u009f]/);
      expect(d.stderr()).toContain('csi \\u009b31m del \\u007f nel \\u0085 end');
    });
  });

  it('answers 200 concurrent calls, each with its own arguments', async () => {
    const clients = await Promise.all([connect(d.url), connect(d.url), connect(d.url), connect(d.url)]);
    try {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          call(clients[i % clients.length]!, i % 2 === 0 ? 'basic.echo' : 'sample.echo', { query: `q${i}`, i }),
        ),
      );
      results.forEach((r, i) => {
        if (i % 2 === 0) expect(valueOf(r)).toEqual({ query: `q${i}`, i });
        else expect(r.structuredContent).toEqual({ query: `q${i}`, i });
      });
    } finally {
      await Promise.all(clients.map((x) => x.close()));
    }
  });

  it('serves other calls while one spins, all of them before it ends, and stops it when its client cancels', async () => {
    const controller = new AbortController();
    let settled = false;
    const spinning = c.client
      .callTool({ name: 'relay.spin', arguments: {} }, undefined, { signal: controller.signal })
      .catch((e: unknown) => e)
      .finally(() => (settled = true));
    await d.waitForLog((e) => e.msg === SPIN_LOG.message && e.harness === 'relay');
    // The spinning guest has started; these run beside it, on other workers, and answer first.
    const others = await Promise.all(Array.from({ length: 20 }, (_, i) => call(c, 'basic.echo', { i })));
    others.forEach((r, i) => expect(valueOf(r)).toEqual({ i }));
    expect(settled).toBe(false);
    controller.abort('enough');
    expect(await spinning).toBeInstanceOf(Error);
    // Logged once the runtime has answered the call as cancelled, which it does after stopping the guest.
    await d.waitForLog((e) => e.msg === 'call cancelled by its caller' && e.harness === 'relay' && e.tool === 'spin');
    expect(valueOf(await call(c, 'basic.echo', { after: 'cancel' }))).toEqual({ after: 'cancel' });
  });

  it('answers tools/call sent in a batch or with unusual headers through the SDK transport, with the same result', async () => {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': c.transport.sessionId!,
    };
    const res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 'b1', method: 'tools/call', params: { name: 'sample.echo', arguments: { query: 'batched' } } },
      ]),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const data = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
    expect(data).toEqual([
      {
        jsonrpc: '2.0',
        id: 'b1',
        result: { content: [{ type: 'text', text: '{"query":"batched"}' }], structuredContent: { query: 'batched' } },
      },
    ]);
    // What the transport refuses, the fast path does not answer either.
    const single = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'basic.echo', arguments: {} } });
    expect(
      (await fetch(`${d.url}/mcp`, { method: 'POST', headers: { ...headers, accept: 'application/json' }, body: single })).status,
    ).toBe(406);
    expect(
      (await fetch(`${d.url}/mcp`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: single })).status,
    ).toBe(415);
    expect(
      (await fetch(`${d.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': '1999-01-01' }, body: single })).status,
    ).toBe(400);
  });

  it('refuses requests without a live session, from foreign origins, and after a session ends', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    let res = await fetch(`${d.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(initialize) });
    expect(res.status).toBe(400);
    res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': 'no-such-session' },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
    res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, origin: 'http://attacker.example' },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(403);
    res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': c.transport.sessionId! },
      body: JSON.stringify({ ...initialize, params: { pad: 'x'.repeat(5 * 1024 * 1024) } }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringContaining('4194304') } });
    res = await fetch(`${d.url}/mcp`, { method: 'POST', headers, body: '{not json' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: -32700 } });

    const ended = await connect(d.url);
    const id = ended.transport.sessionId!;
    await ended.transport.terminateSession();
    res = await fetch(`${d.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': id }, body: JSON.stringify(initialize) });
    expect(res.status).toBe(404);
    await ended.client.close();
  });

  describe('a 2026-07-28 client', () => {
    let m: ModernConnection;
    beforeAll(async () => {
      m = await connectModern(d.url);
    });
    afterAll(async () => {
      await m?.close();
    });

    it('discovers bermd without a session: the version it serves, what it offers, the instructions', async () => {
      expect(m.client.getProtocolEra()).toBe('modern');
      const discovered = m.client.getDiscoverResult()!;
      expect(discovered.supportedVersions).toEqual([MODERN]);
      expect(discovered.capabilities).toMatchObject({ tools: { listChanged: true }, resources: { listChanged: true } });
      expect(discovered.instructions).toContain('{harness}.{tool}');
      // Asked raw: every list result says how long it may be kept, and by whom.
      const res = await fetch(`${d.url}/mcp`, {
        method: 'POST',
        headers: modernHeaders('tools/list'),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('mcp-session-id')).toBeNull();
      const { result } = (await res.json()) as { result: Record<string, unknown> };
      expect(result).toMatchObject({
        resultType: 'complete',
        ttlMs: 5000,
        cacheScope: 'private',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'bermd' } },
      });
    });

    it('lists the same tools, with every result schema as its output schema', async () => {
      const { tools } = await m.client.listTools(undefined, { cacheMode: 'bypass' });
      const legacy = (await c.client.listTools()).tools;
      expect(tools.map((t) => t.name)).toEqual(legacy.map((t) => t.name));
      const byName = new Map(tools.map((t) => [t.name, t]));
      expect(byName.get('sample.echo')).toEqual(legacy.find((t) => t.name === 'sample.echo'));
      // A string result is an output schema too in this generation.
      expect(byName.get('sample.old')).toMatchObject({
        description: 'Deprecated. Answers a string.',
        outputSchema: { type: 'string' },
        annotations: { readOnlyHint: false, openWorldHint: false },
        _meta: { 'berm/harness': 'sample', 'berm/tool': 'old' },
      });
    });

    it('calls tools: typed results whatever their schema, failures and refusals as error results', async () => {
      const echoed = await m.client.callTool({ name: 'sample.echo', arguments: { query: 'now' } });
      expect(echoed.structuredContent).toEqual({ query: 'now' });
      const old = await m.client.callTool({ name: 'sample.old', arguments: {} });
      expect(old.structuredContent).toBe('then');
      expect(valueOf(old)).toBe('then');

      const failed = await m.client.callTool({ name: 'basic.fail', arguments: {} });
      expect(failed.isError).toBe(true);
      expect(textOf(failed)).toBe(FAIL_MESSAGE);
      expect(failed._meta).toMatchObject({ 'berm/error': { code: 'guest-error' } });

      const refused = await m.client.callTool({ name: 'relay.forecast', arguments: { days: 'soon' } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toBe('relay.forecast: argument /days must be integer');
      expect(refused._meta).toMatchObject({ 'berm/error': { code: 'invalid-arguments', path: '/days' } });

      const liar = await m.client.callTool({ name: 'sample.liar', arguments: {} });
      expect(liar.isError).toBe(true);
      expect(liar.structuredContent).toBeUndefined();

      const unknown = await m.client.callTool({ name: 'basic.nothing', arguments: {} }).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(ProtocolError);
      expect((unknown as ProtocolError).code).toBe(ErrorCode.InvalidParams);
      expect((unknown as ProtocolError).message).toContain('Unknown tool: basic.nothing');
    });

    it('reads the usage resources, and answers an unknown one with invalid params', async () => {
      const { resources } = await m.client.listResources(undefined, { cacheMode: 'bypass' });
      expect(resources.map((r) => r.uri)).toContain('berm://sample/usage');
      const read = await m.client.readResource({ uri: 'berm://sample/usage' });
      expect(read.contents).toEqual([{ uri: 'berm://sample/usage', mimeType: 'text/markdown', text: sampleTools().usage }]);
      const missing = await m.client.readResource({ uri: 'berm://basic/usage' }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(ProtocolError);
      expect((missing as ProtocolError).code).toBe(ErrorCode.InvalidParams);
      expect((missing as ProtocolError).data).toEqual({ uri: 'berm://basic/usage' });
    });

    it('hears of deploys and undeploys on a listen stream, beside the 2025 sessions', async () => {
      // A 2025 session of its own, which has heard of no other test's deploys.
      const legacy = await connect(d.url);
      const subscription = await m.listen();
      try {
        expect(subscription.honoredFilter).toEqual({ toolsListChanged: true, resourcesListChanged: true });
        const told = [m.toolsChanged.next(), m.resourcesChanged.next(), legacy.toolsChanged.next()];
        await deploy(d.url, 'later', await harnessImage(sampleManifest({ usage: 'Later usage.' })));
        await Promise.all(told);
        // Told, the client dropped what it had kept: the next list is fresh.
        expect((await m.client.listTools()).tools.map((t) => t.name)).toContain('later.echo');
        expect((await m.client.listResources()).resources.map((r) => r.uri)).toContain('berm://later/usage');

        const gone = [m.toolsChanged.next(), m.resourcesChanged.next()];
        await undeploy(d.url, 'later');
        await Promise.all(gone);
        expect((await m.client.listTools()).tools.map((t) => t.name)).not.toContain('later.echo');
      } finally {
        await subscription.close();
        await legacy.close();
      }
      expect(await subscription.closed).toBe('local');
    });

    it('serves a request that carries a stale session id as the stateless request it is', async () => {
      const res = await fetch(`${d.url}/mcp`, {
        method: 'POST',
        headers: { ...modernHeaders('tools/call', 'basic.echo'), 'mcp-session-id': 'no-such-session' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'basic.echo', arguments: { s: 1 }, _meta: envelope() },
        }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: '{"s":1}' }] } });
    });

    it('refuses a version it does not serve, naming the one it does', async () => {
      const res = await fetch(`${d.url}/mcp`, {
        method: 'POST',
        headers: { ...modernHeaders('tools/list'), 'mcp-protocol-version': '2099-01-01' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/list',
          params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) },
        }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: -32022, data: { supported: [MODERN], requested: '2099-01-01' } } });
    });
  });
});

describe('bermd /mcp usage records', () => {
  it('records the tools a call reached and the events it emitted, written on a clean stop with sessions and streams open', async () => {
    const d = await startDaemon();
    try {
      await deploy(d.url, 'inner', (await basicImage()).bytes);
      await deploy(d.url, 'relay', (await relayImage(['inner'])).bytes);
      const c = await connect(d.url);
      expect(valueOf(await call(c, 'relay.call', { program: 'inner', tool: 'echo', args: {} }))).toEqual({ ok: {} });
      expect(valueOf(await call(c, 'relay.call', { program: 'inner', tool: 'fail', args: {} }))).toEqual({ failed: FAIL_MESSAGE });
      expect(valueOf(await call(c, 'relay.emit', { event: 'reading', fields: { celsius: 3 } }))).toEqual({ ok: null });
      // A session with its stream open when bermd stops (one that has been told of a list change), and
      // a 2026-07-28 listen stream.
      const m = await connectModern(d.url);
      const listening = await m.listen();
      const told = [c.toolsChanged.next(), m.toolsChanged.next()];
      await deploy(d.url, 'tick', await harnessImage(sampleManifest()));
      await Promise.all(told);
      expect(await d.stop()).toBe(0);
      // bermd ended the stream: the client saw it close from the other end.
      expect(await listening.closed).not.toBe('local');
      await m.close();
      expect(d.log().some((e) => e.msg === 'stopped')).toBe(true);
      await c.client.close().catch(() => {});
      const read = async (name: string) =>
        JSON.parse(await readFile(path.join(d.stateDir, 'harnesses', `${name}.json`), 'utf8')) as {
          used: { tools: Record<string, string>; events: Record<string, string> };
        };
      const relay = await read('relay');
      expect(Object.keys(relay.used.tools).sort()).toEqual(['call', 'emit']);
      expect(Object.keys(relay.used.events)).toEqual(['reading']);
      expect(Object.keys((await read('inner')).used.tools).sort()).toEqual(['echo', 'fail']);
      expect((await read('tick')).used).toEqual({ tools: {}, events: {} });
    } finally {
      await d.stop();
      await removeDir(d.stateDir);
    }
  });
});
