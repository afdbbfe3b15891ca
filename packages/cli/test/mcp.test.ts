// `berm mcp`, as a client that starts local servers runs it: the SDK's stdio client transports spawn the
// real `berm mcp` (found on PATH, as the README's recipe names it) in front of a real bermd, with the
// 1.x client (2025-11-25) and the v2 client pinned to 2026-07-28. Notifications and the daemon's
// restarts are awaited through the events that mark them; nothing here sleeps. The tests that only list
// and call share a daemon; each that stops one, or needs a token, starts its own, so any test passes run
// alone.
import { Client as ModernClient, LOG_LEVEL_META_KEY, ProtocolError } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { Arrivals, deploy, textOf, valueOf } from '../../bermd/test/mcp-client.js';
import { FAIL_MESSAGE, SPIN_LOG, basicImage, relayImage } from '../../../test/helpers/guest.js';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { initialize, RawClient, recipe, StderrLines } from './helpers/stdio.js';

/** What each harness the tests call is. */
const HARNESSES = {
  basic: async () => (await basicImage()).bytes,
  relay: async () => (await relayImage()).bytes,
  sample: () => harnessImage(sampleManifest({ usage: '# sample\n\nRead me first.' })),
};

/** A bermd on a state directory of its own with `names` deployed. */
async function daemonWith(...names: (keyof typeof HARNESSES)[]): Promise<RunningDaemon> {
  const d = await startDaemon({ stateDir: await tempDir() });
  for (const name of names) await deploy(d.url, name, await HARNESSES[name]());
  return d;
}

/**
 * A test that starts bermd processes of its own: starts, deploys, and a restart's retries (250 ms
 * doubling) take longer than a call does on a machine running the other test files.
 */
const OWN_DAEMON = 120_000;

/** The 1.x SDK's client on `berm mcp`, with each notification kind something a test can await. */
async function client2025(url: string): Promise<{
  client: Client;
  stderr: StderrLines;
  toolsChanged: Arrivals;
  resourcesChanged: Arrivals;
  messages: Arrivals<unknown>;
}> {
  const transport = new StdioClientTransport({ ...recipe(url), stderr: 'pipe' });
  const stderr = new StderrLines();
  transport.stderr!.on('data', (c: Buffer) => stderr.feed(c));
  const client = new Client({ name: 'stdio-2025', version: '0' });
  const toolsChanged = new Arrivals();
  const resourcesChanged = new Arrivals();
  const messages = new Arrivals<unknown>();
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => toolsChanged.push());
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resourcesChanged.push());
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => messages.push(n.params));
  await client.connect(transport);
  return { client, stderr, toolsChanged, resourcesChanged, messages };
}

/** The v2 SDK's client pinned to 2026-07-28 on `berm mcp`. */
async function client2026(url: string): Promise<{ client: ModernClient; toolsChanged: Arrivals; messages: Arrivals<unknown> }> {
  const transport = new ModernStdio({ ...recipe(url), stderr: 'ignore' });
  const client = new ModernClient({ name: 'stdio-2026', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const toolsChanged = new Arrivals();
  const messages = new Arrivals<unknown>();
  client.setNotificationHandler('notifications/tools/list_changed', () => toolsChanged.push());
  client.setNotificationHandler('notifications/message', (n) => messages.push(n.params));
  await client.connect(transport);
  return { client, toolsChanged, messages };
}

describe('berm mcp', () => {
  // Never stopped by a test: the ones that stop bermd start their own.
  let d: RunningDaemon;

  beforeAll(async () => {
    d = await daemonWith('basic', 'relay', 'sample');
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  it('writes nothing but the protocol on stdout, and says where it relays on stderr', async () => {
    const raw = RawClient.start(d.url);
    raw.send(initialize(1));
    raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    await raw.answer(2);
    expect(raw.messages[0]).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'bermd' } } });
    expect(raw.messages[1]).toMatchObject({ jsonrpc: '2.0', id: 2, result: { tools: expect.any(Array) } });
    expect(await raw.stderr.wait(/relaying MCP on stdio to/)).toContain(`${d.url}/mcp`);
    // The client closing stdin is the end: berm mcp ends its session and exits 0.
    expect(await raw.end()).toBe(0);
    // Every line it wrote on stdout is a JSON-RPC message.
    const lines = Buffer.concat(raw.stdoutBytes).toString('utf8').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { jsonrpc?: unknown }).jsonrpc)).toEqual(lines.map(() => '2.0'));
  });

  describe('to a 2025-11-25 client (the 1.x SDK)', () => {
    let session: Awaited<ReturnType<typeof client2025>>;

    beforeAll(async () => {
      session = await client2025(d.url);
    });
    afterAll(async () => {
      await session?.client.close();
    });

    it('lists and calls through the relay: results, failures, refusals and unknown tools as bermd answers them', async () => {
      const { client } = session;
      expect(client.getServerVersion()).toMatchObject({ name: 'bermd' });
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['basic.echo', 'relay.emit', 'sample.echo']));
      expect(valueOf((await client.callTool({ name: 'basic.echo', arguments: { via: 'stdio' } })) as never)).toEqual({ via: 'stdio' });
      const failed = (await client.callTool({ name: 'basic.fail', arguments: {} })) as never;
      expect(textOf(failed)).toBe(FAIL_MESSAGE);
      const refused = (await client.callTool({ name: 'relay.forecast', arguments: { days: 'soon' } })) as {
        isError?: boolean;
        _meta?: unknown;
      };
      expect(refused.isError).toBe(true);
      expect(refused._meta).toEqual({ 'berm/error': { code: 'invalid-arguments', path: '/days' } });
      const unknown = await client.callTool({ name: 'basic.nothing', arguments: {} }).catch((e: unknown) => e);
      expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
    });

    it('reads a usage resource', async () => {
      const read = await session.client.readResource({ uri: 'berm://sample/usage' });
      expect(read.contents).toEqual([{ uri: 'berm://sample/usage', mimeType: 'text/markdown', text: '# sample\n\nRead me first.' }]);
    });

    it('relays list changes and events', async () => {
      const { client, toolsChanged, resourcesChanged, messages } = session;
      const told = [toolsChanged.next(), resourcesChanged.next()];
      await deploy(d.url, 'later', await harnessImage(sampleManifest({ usage: 'Later.' })));
      await Promise.all(told);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('later.echo');

      await client.setLoggingLevel('notice');
      const before = messages.received.length;
      await client.callTool({ name: 'relay.emit', arguments: { event: 'reading', fields: { celsius: 1 } } });
      expect(messages.received.slice(before)).toEqual([
        { level: 'notice', logger: 'relay', data: { event: 'reading', fields: { celsius: 1 }, tool: 'emit' } },
      ]);
    });
  });

  describe('to a 2026-07-28 client (the v2 SDK)', () => {
    let modern: Awaited<ReturnType<typeof client2026>>;

    beforeAll(async () => {
      modern = await client2026(d.url);
    });
    afterAll(async () => {
      await modern?.client.close();
    });

    it('discovers bermd, lists, calls, reads and hears its own events', async () => {
      const { client, messages } = modern;
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getDiscoverResult()?.supportedVersions).toEqual(['2026-07-28']);
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'sample.echo')?.outputSchema).toBeDefined();
      const echoed = await client.callTool({ name: 'sample.echo', arguments: { query: 'q' } });
      expect(echoed.structuredContent).toEqual({ query: 'q' });
      const failed = await client.callTool({ name: 'basic.fail', arguments: {} });
      expect(failed.isError).toBe(true);
      const refused = await client.callTool({ name: 'relay.forecast', arguments: { days: -1 } });
      expect(refused._meta).toMatchObject({ 'berm/error': { code: 'invalid-arguments' } });
      const unknown = await client.callTool({ name: 'basic.nothing', arguments: {} }).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(ProtocolError);
      const read = await client.readResource({ uri: 'berm://sample/usage' });
      expect(read.contents[0]).toMatchObject({ text: '# sample\n\nRead me first.' });
      const before = messages.received.length;
      await client.callTool({
        name: 'relay.emit',
        arguments: { event: 'reading', fields: { celsius: 3 } },
        _meta: { [LOG_LEVEL_META_KEY]: 'info' },
      });
      expect(messages.received.slice(before)).toEqual([
        { level: 'notice', logger: 'relay', data: { event: 'reading', fields: { celsius: 3 }, tool: 'emit' } },
      ]);
    });

    it('cancels a call by closing its request, when the client sends notifications/cancelled', async () => {
      const { client } = modern;
      const controller = new AbortController();
      const spinning = client.callTool({ name: 'relay.spin', arguments: {} }, { signal: controller.signal }).catch((e: unknown) => e);
      await d.waitForLog((e) => e.msg === SPIN_LOG.message && e.harness === 'relay');
      controller.abort('enough');
      expect(await spinning).toBeInstanceOf(Error);
      // bermd stopped the guest: the relay closed the request the cancellation named.
      await d.waitForLog((e) => e.msg === 'call cancelled by its caller' && e.harness === 'relay' && e.tool === 'spin');
      expect(valueOf(await client.callTool({ name: 'basic.echo', arguments: { after: 'cancel' } }))).toEqual({ after: 'cancel' });
    });
  });

  it(
    'answers a 2025-11-25 client with a clear error while bermd is down, keeps trying, and picks up again when it is back',
    async () => {
      let own = await daemonWith('basic', 'relay');
      const { stateDir, port } = own;
      const { client, stderr, toolsChanged, messages } = await client2025(own.url);
      try {
        await client.setLoggingLevel('notice');
        expect(await own.stop()).toBe(0);
        const down = await client.callTool({ name: 'basic.echo', arguments: {} }).catch((e: unknown) => e);
        expect(down).toBeInstanceOf(McpError);
        expect((down as McpError).code).toBe(-32000);
        expect((down as McpError).message).toMatch(/bermd is not reachable at http:\/\/127\.0\.0\.1:\d+\/mcp .*berm mcp keeps trying/);
        await stderr.wait(/lost bermd at .*; retrying/);

        // Back on the same address with the same state: a new session, opened by the relay, and the
        // client told its lists may have changed.
        const told = toolsChanged.next();
        own = await startDaemon({ stateDir, port });
        await told;
        await stderr.wait(/bermd answers again/);
        expect(valueOf((await client.callTool({ name: 'basic.echo', arguments: { back: true } })) as never)).toEqual({ back: true });
        // The log level the client set is the new session's too.
        const before = messages.received.length;
        await client.callTool({ name: 'relay.emit', arguments: { event: 'reading', fields: { celsius: 2 } } });
        expect(messages.received.slice(before)).toEqual([
          { level: 'notice', logger: 'relay', data: { event: 'reading', fields: { celsius: 2 }, tool: 'emit' } },
        ]);
      } finally {
        await client.close();
        await own.stop();
        await removeDir(stateDir);
      }
    },
    OWN_DAEMON,
  );

  it(
    'relays a 2026-07-28 listen stream, and keeps it across a restart of bermd',
    async () => {
      let own = await daemonWith('basic');
      const { stateDir, port } = own;
      const { client, toolsChanged } = await client2026(own.url);
      try {
        const subscription = await client.listen({ toolsListChanged: true });
        let told = toolsChanged.next();
        await deploy(own.url, 'newer', await harnessImage(sampleManifest()));
        await told;

        expect(await own.stop()).toBe(0);
        const down = await client.callTool({ name: 'basic.echo', arguments: {} }).catch((e: unknown) => e);
        expect((down as ProtocolError).message).toMatch(/bermd is not reachable at .*berm mcp keeps trying/);
        told = toolsChanged.next();
        own = await startDaemon({ stateDir, port });
        await told;
        expect(valueOf(await client.callTool({ name: 'basic.echo', arguments: { again: 1 } }))).toEqual({ again: 1 });
        // Still the client's subscription: a deploy now reaches it.
        told = toolsChanged.next();
        await deploy(own.url, 'newest', await harnessImage(sampleManifest()));
        await told;
        await subscription.close();
      } finally {
        await client.close();
        await own.stop();
        await removeDir(stateDir);
      }
    },
    OWN_DAEMON,
  );

  it(
    'sends BERM_TOKEN as the bearer token, and says so when bermd refuses it',
    async () => {
      const tokenDir = await tempDir();
      const tokenFile = join(tokenDir, 'token');
      await import('node:fs/promises').then((fs) => fs.writeFile(tokenFile, 'sesame\n', { mode: 0o600 }));
      const guarded = await startDaemon({ args: ['--token-file', tokenFile] });
      try {
        const good = new Client({ name: 'token', version: '0' });
        await good.connect(new StdioClientTransport({ ...recipe(guarded.url, { BERM_TOKEN: 'sesame' }), stderr: 'ignore' }));
        expect(good.getServerVersion()).toMatchObject({ name: 'bermd' });
        await good.close();

        const bad = new Client({ name: 'no-token', version: '0' });
        const refused = await bad.connect(new StdioClientTransport({ ...recipe(guarded.url), stderr: 'ignore' })).catch((e: unknown) => e);
        expect((refused as Error).message).toMatch(/asks for a token \(401\): run berm login --url http:\S+, or set BERM_TOKEN/);
        await bad.close();
      } finally {
        await guarded.stop();
        await removeDir(guarded.stateDir);
        await removeDir(tokenDir);
      }
    },
    OWN_DAEMON,
  );

  it(
    "answers a call bermd refuses for a scope BERM_TOKEN's principal lacks with an error naming the scope, and goes on relaying",
    async () => {
      const dir = await tempDir();
      const tokens = { alice: 'alice-may-call-basic-alone', deployer: 'deployer-of-this-test' };
      const hash = (token: string): string => createHash('sha256').update(token).digest('hex');
      const access = join(dir, 'access.json');
      await writeFile(
        access,
        JSON.stringify([
          { name: 'alice', token_sha256: hash(tokens.alice), scopes: ['berm:call:basic'] },
          { name: 'deployer', token_sha256: hash(tokens.deployer), scopes: ['berm:deploy'] },
        ]),
        { mode: 0o600 },
      );
      const own = await startDaemon({ args: ['--access', access] });
      const legacy = new Client({ name: 'scoped', version: '0' });
      const modern = new ModernClient({ name: 'scoped-2026', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      try {
        const deployer = { authorization: `Bearer ${tokens.deployer}` };
        await deploy(own.url, 'basic', await HARNESSES.basic(), deployer);
        await deploy(own.url, 'sample', await HARNESSES.sample(), deployer);
        const env = { BERM_TOKEN: tokens.alice };
        await legacy.connect(new StdioClientTransport({ ...recipe(own.url, env), stderr: 'ignore' }));
        await modern.connect(new ModernStdio({ ...recipe(own.url, env), stderr: 'ignore' }));

        // bermd's own answer, as it gave it: the code, the scope lacking, and words naming both.
        const said =
          'alice may not call "sample.echo": that needs the scope berm:call:sample, which it does not hold; use a token that holds it';
        const old = (await legacy.callTool({ name: 'sample.echo', arguments: { query: 'q' } }).catch((e: unknown) => e)) as McpError;
        expect(old).toBeInstanceOf(McpError);
        expect([old.code, old.message, old.data]).toEqual([
          -32000,
          `MCP error -32000: ${said}`,
          { code: 'insufficient-scope', scope: 'berm:call:sample' },
        ]);
        const next = (await modern.callTool({ name: 'sample.echo', arguments: { query: 'q' } }).catch((e: unknown) => e)) as ProtocolError;
        expect(next).toBeInstanceOf(ProtocolError);
        expect([next.code, next.data]).toEqual([-32000, { code: 'insufficient-scope', scope: 'berm:call:sample' }]);
        expect(next.message).toContain(said);
        // bermd is not lost, and the relay does not try it again: the next call goes straight through.
        expect(valueOf((await legacy.callTool({ name: 'basic.echo', arguments: { n: 1 } })) as never)).toEqual({ n: 1 });
        expect(valueOf((await modern.callTool({ name: 'basic.echo', arguments: { n: 2 } })) as never)).toEqual({ n: 2 });
        expect((await legacy.listTools()).tools.every((t) => t.name.startsWith('basic.'))).toBe(true);
      } finally {
        await Promise.all([legacy.close(), modern.close()]);
        await own.stop();
        await removeDir(own.stateDir);
        await removeDir(dir);
      }
    },
    OWN_DAEMON,
  );
});
