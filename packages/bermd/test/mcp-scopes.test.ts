// /mcp as each principal sees it: a real bermd with an --access file of principals (every harness,
// alpha alone, the control API's reads only, nothing), two harnesses, and the official SDK clients of both
// generations sending their bearer token, beside raw HTTP where the exact answer is the point. Each
// principal lists and reads exactly its harnesses, calls what it may, and is refused 403 with the
// challenge naming the scope for what it may not (nothing runs); another principal's session is as
// unknown as one that never was; list changes and events reach only those who may see them. Every
// test runs with the fast path and with --mcp-fast-path false. Nothing here sleeps: list changes are
// counted at a message that travels the same stream after them, or at the stream's end.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { InsufficientScopeError, ProtocolError } from '@modelcontextprotocol/client';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage } from '../../../test/helpers/wat.js';
import { relayManifest, relayWat } from '../../../test/helpers/guest.js';
import { tokenSha256 } from '../dist/auth/index.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { type AnyToolResult, connect, connectModern, deploy, envelope, modernHeaders, valueOf } from './mcp-client.js';
import { INITIALIZE, MCP_HEADERS, rawRequest, type RawAnswer } from './raw-http.js';

/** Who the access file names, and what each holds. */
const SCOPES = {
  everyone: ['berm:call'],
  alice: ['berm:call:alpha'],
  reader: ['berm:read'],
  nobody: [] as string[],
  deployer: ['berm:deploy', 'berm:read'],
} as const;
type Who = keyof typeof SCOPES;

/** The relay guest under `name`, with a usage of its own (`version` makes a redeploy change it). */
async function relayNamed(name: string, version = 1): Promise<Uint8Array> {
  return buildImage(relayWat(), { ...relayManifest(), usage: `# ${name}\n\nUsage, version ${version}.` });
}

const RELAY_TOOLS = relayManifest().tools.map((t) => t.name);
const toolsOf = (...harnesses: string[]): string[] => harnesses.flatMap((h) => RELAY_TOOLS.map((t) => `${h}.${t}`)).sort();

/** A bermd whose --access file names every principal of SCOPES, with alpha and beta deployed. */
async function guarded(args: readonly string[]): Promise<{ d: RunningDaemon; dir: string; bearer(who: Who): Record<string, string> }> {
  const dir = await tempDir();
  const tokens = Object.fromEntries(Object.keys(SCOPES).map((who) => [who, `berm_${randomBytes(32).toString('base64url')}`])) as Record<
    Who,
    string
  >;
  const entries = Object.entries(SCOPES).map(([name, scopes]) => ({ name, token_sha256: tokenSha256(tokens[name as Who]), scopes }));
  const access = path.join(dir, 'access.json');
  await writeFile(access, JSON.stringify(entries), { mode: 0o600 });
  const d = await startDaemon({ args: ['--access', access, '--log-level', 'debug', ...args] });
  const bearer = (who: Who): Record<string, string> => ({ authorization: `Bearer ${tokens[who]}` });
  await deploy(d.url, 'alpha', await relayNamed('alpha'), bearer('deployer'));
  await deploy(d.url, 'beta', await relayNamed('beta'), bearer('deployer'));
  return { d, dir, bearer };
}

function post(url: string, headers: Record<string, string>, body: unknown): Promise<RawAnswer> {
  return rawRequest(url, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) });
}

/** An answer's JSON-RPC messages: the one JSON body, or each SSE frame's data. */
function messagesOf(answer: RawAnswer): Array<Record<string, unknown>> {
  if (!String(answer.headers['content-type']).startsWith('text/event-stream')) return [JSON.parse(answer.body) as Record<string, unknown>];
  return answer.body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
}

/** A raw 2025 session of `who`: initialized, its id. */
async function rawSession(url: string, auth: Record<string, string>): Promise<string> {
  const init = await rawRequest(url, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, ...auth }, body: INITIALIZE });
  expect(init.status).toBe(200);
  const id = init.headers['mcp-session-id'] as string;
  const initialized = await post(url, { ...auth, 'mcp-session-id': id }, { jsonrpc: '2.0', method: 'notifications/initialized' });
  expect(initialized.status).toBe(202);
  return id;
}

function toolCall(id: number | string, name: string, args: Record<string, unknown> = {}): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

function modernCall(id: number | string, name: string, args: Record<string, unknown> = {}): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: envelope() } };
}

/**
 * What alice's 403 for a call of `name` needing `scope` is, whatever its harness and whether it exists:
 * the challenge asks for what she holds and that scope, the body names the scope.
 */
function expectRefusal(answer: RawAnswer, id: number | string | null, name: string, scope: string): void {
  expect(answer.status).toBe(403);
  expect(answer.headers['www-authenticate']).toBe(`Bearer error="insufficient_scope", scope="berm:call:alpha ${scope}"`);
  expect(JSON.parse(answer.body)).toEqual({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32000,
      message: `alice may not call "${name}": that needs the scope ${scope}, which it does not hold; use a token that holds it`,
      data: { code: 'insufficient-scope', scope },
    },
  });
}

const WAYS = [
  { way: 'with the fast path', args: [], via: 'fast-path' },
  { way: 'with --mcp-fast-path false', args: ['--mcp-fast-path', 'false'], via: 'transport' },
] as const;

describe.each(WAYS)('/mcp for each principal, $way', ({ args, via }) => {
  let d: RunningDaemon;
  let dir: string;
  let bearer: (who: Who) => Record<string, string>;

  beforeAll(async () => {
    ({ d, dir, bearer } = await guarded(args));
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
    if (dir) await removeDir(dir);
  });

  /** The tools of `harness` its callers have used, as the control API says. */
  async function used(harness: string): Promise<Record<string, string | null>> {
    const res = await fetch(`${d.url}/harnesses/${harness}`, { headers: bearer('deployer') });
    return ((await res.json()) as { usage: { tools: Record<string, string | null> } }).usage.tools;
  }

  it('lists to each principal exactly the tools and usage of the harnesses it may call, in both generations, and names none in its instructions', async () => {
    for (const [who, harnesses] of [
      ['alice', ['alpha']],
      ['everyone', ['alpha', 'beta']],
    ] as const) {
      const legacy = await connect(d.url, bearer(who));
      const modern = await connectModern(d.url, bearer(who));
      try {
        for (const client of [legacy.client, modern.client]) {
          expect((await client.listTools()).tools.map((t) => t.name).sort(), who).toEqual(toolsOf(...harnesses));
          expect((await client.listResources()).resources.map((r) => r.uri).sort(), who).toEqual(harnesses.map((h) => `berm://${h}/usage`));
          expect(client.getServerVersion()).toMatchObject({ name: 'bermd' });
          const instructions = client.getInstructions() ?? '';
          expect(instructions).not.toMatch(/alpha|beta/);
        }
        const read = await legacy.client.readResource({ uri: 'berm://alpha/usage' });
        expect(read.contents).toEqual([{ uri: 'berm://alpha/usage', mimeType: 'text/markdown', text: '# alpha\n\nUsage, version 1.' }]);
      } finally {
        await Promise.all([legacy.close(), modern.close()]);
      }
    }
  });

  it('reads the usage of a harness the principal may not call as it reads one that is not deployed', async () => {
    const legacy = await connect(d.url, bearer('alice'));
    const modern = await connectModern(d.url, bearer('alice'));
    try {
      for (const read of [(uri: string) => legacy.client.readResource({ uri }), (uri: string) => modern.client.readResource({ uri })]) {
        const hidden = (await read('berm://beta/usage').catch((e: unknown) => e)) as { code: number; data: unknown };
        const absent = (await read('berm://ghost/usage').catch((e: unknown) => e)) as { code: number; data: unknown };
        expect(hidden.code).toBe(-32602);
        expect(hidden.data).toEqual({ uri: 'berm://beta/usage' });
        expect([absent.code, absent.data]).toEqual([hidden.code, { uri: 'berm://ghost/usage' }]);
      }
    } finally {
      await Promise.all([legacy.close(), modern.close()]);
    }
  });

  it('refuses a principal that may call no harness at the door, 403 naming berm:call', async () => {
    for (const [who, asked] of [
      ['reader', 'berm:read berm:call'],
      ['nobody', 'berm:call'],
    ] as const) {
      const init = await rawRequest(d.url, { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, ...bearer(who) }, body: INITIALIZE });
      expect(init.status, who).toBe(403);
      expect(init.headers['www-authenticate']).toBe(`Bearer error="insufficient_scope", scope="${asked}"`);
      expect(JSON.parse(init.body)).toMatchObject({ error: { code: -32000, data: { code: 'insufficient-scope', scope: 'berm:call' } } });
    }
  });

  it("answers a 2025 session's call of a tool of another harness 403 with the challenge, whether or not it exists, and runs nothing", async () => {
    const session = await rawSession(d.url, bearer('alice'));
    const headers = { ...bearer('alice'), 'mcp-session-id': session };
    const hidden = await post(d.url, headers, toolCall(5, 'beta.chain', { program: 'beta' }));
    expectRefusal(hidden, 5, 'beta.chain', 'berm:call:beta');
    const absent = await post(d.url, headers, toolCall('x', 'ghost.chain', { program: 'beta' }));
    expectRefusal(absent, 'x', 'ghost.chain', 'berm:call:ghost');
    // A batch holding one such call is refused whole: its other call does not run either.
    const batch = await post(d.url, headers, [
      toolCall(6, 'alpha.log_twice', { level: 'info', message: 'batched' }),
      toolCall(7, 'beta.chain'),
    ]);
    expectRefusal(batch, null, 'beta.chain', 'berm:call:beta');
    expect(await used('beta')).not.toHaveProperty('chain', expect.any(String));
    expect(await used('alpha')).not.toHaveProperty('log_twice', expect.any(String));

    // Its own harness's tools run, with it named in the log; an unknown tool of it, or a name of no harness, is unknown.
    const ran = await post(d.url, headers, toolCall(8, 'alpha.forecast', { days: 2 }));
    expect(ran.status).toBe(200);
    expect(messagesOf(ran)).toEqual([{ jsonrpc: '2.0', id: 8, result: { content: [{ type: 'text', text: '{"days":2}' }] } }]);
    const line = await d.waitForLog((e) => e.msg === 'tools/call finished' && e.session === session && e.rpc_id === 8);
    expect(line).toMatchObject({ principal: 'alice', tool: 'alpha.forecast', via });
    for (const name of ['alpha.nothing', 'nothing']) {
      const unknown = await post(d.url, headers, toolCall(9, name));
      expect(unknown.status).toBe(200);
      expect(messagesOf(unknown)).toMatchObject([{ id: 9, error: { code: -32602, message: `Unknown tool: ${name}` } }]);
    }
    expect(d.log().some((e) => e.msg === 'tools/call finished' && e.session === session && e.rpc_id === 5)).toBe(false);
  });

  it('answers a 2026-07-28 call of a tool of another harness 403 with the challenge, whether or not it exists, and runs nothing', async () => {
    const as = (name: string): Record<string, string> => ({ ...modernHeaders('tools/call', name), ...bearer('alice') });
    const hidden = await post(d.url, as('beta.spin'), modernCall(15, 'beta.spin'));
    expectRefusal(hidden, 15, 'beta.spin', 'berm:call:beta');
    const absent = await post(d.url, as('ghost.spin'), modernCall('y', 'ghost.spin'));
    expectRefusal(absent, 'y', 'ghost.spin', 'berm:call:ghost');
    expect(await used('beta')).not.toHaveProperty('spin', expect.any(String));

    const ran = await post(d.url, as('alpha.forecast'), modernCall(16, 'alpha.forecast', { days: 3 }));
    expect(ran.status).toBe(200);
    expect(messagesOf(ran)).toMatchObject([{ id: 16, result: { content: [{ type: 'text', text: '{"days":3}' }] } }]);
    const line = await d.waitForLog((e) => e.msg === 'tools/call finished' && e.session === undefined && e.rpc_id === 16);
    expect(line).toMatchObject({ principal: 'alice', tool: 'alpha.forecast', via });
    const unknown = await post(d.url, as('alpha.nothing'), modernCall(17, 'alpha.nothing'));
    expect(messagesOf(unknown)).toMatchObject([{ id: 17, error: { code: -32602 } }]);
  });

  it('gives the SDK clients the refusal as their transports report a 403 insufficient_scope, and goes on serving', async () => {
    const legacy = await connect(d.url, bearer('alice'));
    const modern = await connectModern(d.url, bearer('alice'));
    try {
      const old = await legacy.client.callTool({ name: 'beta.log', arguments: {} }).catch((e: unknown) => e);
      expect(old).toBeInstanceOf(StreamableHTTPError);
      expect((old as StreamableHTTPError).code).toBe(403);
      expect((old as Error).message).toContain('"scope":"berm:call:beta"');
      const next = await modern.client.callTool({ name: 'beta.log', arguments: {} }).catch((e: unknown) => e);
      expect(InsufficientScopeError.isInstance(next)).toBe(true);
      expect((next as InsufficientScopeError).requiredScope).toBe('berm:call:alpha berm:call:beta');
      // Refused, not broken: the same clients go on calling what they may.
      for (const client of [legacy.client, modern.client]) {
        const result = (await client.callTool({ name: 'alpha.forecast', arguments: { days: 1 } })) as AnyToolResult;
        expect(valueOf(result)).toEqual({ days: 1 });
      }
      const unknown = await modern.client.callTool({ name: 'alpha.nothing', arguments: {} }).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(ProtocolError);
    } finally {
      await Promise.all([legacy.close(), modern.close()]);
    }
  });

  it("answers a request on another principal's session 404, as for a session that never was, and leaves the session alone", async () => {
    const session = await rawSession(d.url, bearer('everyone'));
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const stranger = await post(d.url, { ...bearer('alice'), 'mcp-session-id': session }, list);
    const unknown = await post(d.url, { ...bearer('alice'), 'mcp-session-id': 'f0f0f0f0-0000-4000-8000-000000000000' }, list);
    expect(stranger.status).toBe(404);
    expect([unknown.status, unknown.body]).toEqual([stranger.status, stranger.body]);
    expect(JSON.parse(stranger.body)).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
    for (const method of ['GET', 'DELETE']) {
      const other = await rawRequest(d.url, {
        method,
        path: '/mcp',
        headers: { ...MCP_HEADERS, ...bearer('alice'), 'mcp-session-id': session },
      });
      expect(other.status, method).toBe(404);
    }
    // Its owner still has it, whole.
    const mine = await post(d.url, { ...bearer('everyone'), 'mcp-session-id': session }, list);
    expect(mine.status).toBe(200);
    expect((messagesOf(mine)[0]!.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort()).toEqual(
      toolsOf('alpha', 'beta'),
    );
  });
});

describe.each(WAYS)('list changes and events for each principal, $way', ({ args }) => {
  it('reach a session or a listen stream only for the harnesses its principal may call', async () => {
    const { d, dir, bearer } = await guarded(args);
    const alice = await connect(d.url, bearer('alice'));
    const everyone = await connect(d.url, bearer('everyone'));
    const caller = await connect(d.url, bearer('everyone'));
    const aliceListens = await connectModern(d.url, bearer('alice'));
    const everyoneListens = await connectModern(d.url, bearer('everyone'));
    try {
      for (const c of [alice, everyone]) {
        await c.client.setLoggingLevel('notice');
        const session = c.transport.sessionId;
        await d.waitForLog((e) => e.msg === 'mcp notification stream opened' && e.session === session);
      }
      const listens = [await aliceListens.listen(), await everyoneListens.listen()];

      // A harness alice may not call, then hers.
      await deploy(d.url, 'delta', await relayNamed('delta'), bearer('deployer'));
      await deploy(d.url, 'alpha', await relayNamed('alpha', 2), bearer('deployer'));
      // Another session's events, beta's then alpha's, travel each session's stream after the list changes.
      for (const harness of ['beta', 'alpha']) {
        await caller.client.callTool({ name: `${harness}.emit`, arguments: { event: 'reading', fields: { celsius: 1 } } });
      }
      await Promise.all([alice.messages.reach(1), everyone.messages.reach(2)]);
      expect(alice.messages.received.map((m) => m.logger)).toEqual(['alpha']);
      expect(everyone.messages.received.map((m) => m.logger)).toEqual(['beta', 'alpha']);
      expect([alice.toolsChanged.received.length, alice.resourcesChanged.received.length]).toEqual([1, 1]);
      expect([everyone.toolsChanged.received.length, everyone.resourcesChanged.received.length]).toEqual([2, 2]);
      expect((await alice.client.listTools()).tools.map((t) => t.name).sort()).toEqual(toolsOf('alpha'));

      // A listen stream ends when bermd stops: what it carried before arrived first.
      expect(await d.stop()).toBe(0);
      await Promise.all(listens.map((l) => l.closed));
      expect([aliceListens.toolsChanged.received.length, aliceListens.resourcesChanged.received.length]).toEqual([1, 1]);
      expect([everyoneListens.toolsChanged.received.length, everyoneListens.resourcesChanged.received.length]).toEqual([2, 2]);
    } finally {
      await Promise.all([alice, everyone, caller, aliceListens, everyoneListens].map((c) => c.close().catch(() => {})));
      await d.stop();
      await removeDir(d.stateDir);
      await removeDir(dir);
    }
  });
});
