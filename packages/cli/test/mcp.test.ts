// `berm mcp`, as a client that starts local servers runs it: the SDK's stdio client transports spawn the
// real `berm mcp` (found on PATH, as the README's recipe names it) in front of a real bermd, with the
// 1.x client (2025-11-25) and the v2 client pinned to 2026-07-28. Notifications and the daemon's
// restarts are awaited through the events that mark them; nothing here sleeps.
import { spawn } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { Arrivals, deploy, textOf, valueOf } from '../../bermd/test/mcp-client.js';
import { FAIL_MESSAGE, SPIN_LOG, basicImage, relayImage } from '../../../test/helpers/guest.js';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { repoRoot } from './helpers/cli.js';

/**
 * What the README's stdio recipe runs: `berm mcp`, with the daemon's address in BERM_URL. `berm` is found
 * on PATH, and the `node` its first line asks for is the one running the tests.
 */
function recipe(url: string, env: Record<string, string> = {}): { command: string; args: string[]; env: Record<string, string> } {
  const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  delete inherited.BERM_TOKEN;
  return {
    command: 'berm',
    args: ['mcp'],
    env: {
      ...inherited,
      PATH: [join(repoRoot, 'bin'), dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
      BERM_URL: url,
      ...env,
    },
  };
}

/** Lines `berm mcp` wrote on stderr, and a wait for the first that matches. */
class StderrLines {
  readonly lines: string[] = [];
  private readonly waiters: Array<{ match: RegExp; resolve: (line: string) => void }> = [];

  feed(chunk: Buffer | string): void {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      this.lines.push(line);
      for (const w of [...this.waiters])
        if (w.match.test(line)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  }

  wait(match: RegExp): Promise<string> {
    const found = this.lines.find((l) => match.test(l));
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}

describe('berm mcp', () => {
  let stateDir: string;
  let d: RunningDaemon;

  beforeAll(async () => {
    stateDir = await tempDir();
    d = await startDaemon({ stateDir });
    await deploy(d.url, 'basic', (await basicImage()).bytes);
    await deploy(d.url, 'relay', (await relayImage()).bytes);
    await deploy(d.url, 'sample', await harnessImage(sampleManifest({ usage: '# sample\n\nRead me first.' })));
  });
  afterAll(async () => {
    await d?.stop();
    await removeDir(stateDir);
  });

  it('writes nothing but the protocol on stdout, and says where it relays on stderr', async () => {
    const { command, args, env } = recipe(d.url);
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const stderr = new StderrLines();
    child.stderr.on('data', (c: Buffer) => stderr.feed(c));
    const lines = createInterface({ input: child.stdout });
    const out: string[] = [];
    const answered = new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        out.push(line);
        if (out.length === 2) resolve();
      }),
    );
    const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } };
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: init })}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
    await answered;
    const messages = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(messages[0]).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'bermd' } } });
    expect(messages[1]).toMatchObject({ jsonrpc: '2.0', id: 2, result: { tools: expect.any(Array) } });
    expect(await stderr.wait(/relaying MCP on stdio to/)).toContain(`${d.url}/mcp`);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.end();
    // The client closing stdin is the end: berm mcp ends its session and exits 0.
    expect(await exited).toBe(0);
  });

  describe('to a 2025-11-25 client (the 1.x SDK)', () => {
    let client: Client;
    let transport: StdioClientTransport;
    const stderr = new StderrLines();
    const toolsChanged = new Arrivals();
    const resourcesChanged = new Arrivals();
    const messages = new Arrivals<unknown>();

    beforeAll(async () => {
      transport = new StdioClientTransport({ ...recipe(d.url), stderr: 'pipe' });
      transport.stderr!.on('data', (c: Buffer) => stderr.feed(c));
      client = new Client({ name: 'stdio-2025', version: '0' });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => toolsChanged.push());
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resourcesChanged.push());
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => messages.push(n.params));
      await client.connect(transport);
    });
    afterAll(async () => {
      await client?.close();
    });

    it('lists and calls through the relay: results, failures, refusals and unknown tools as bermd answers them', async () => {
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
      const read = await client.readResource({ uri: 'berm://sample/usage' });
      expect(read.contents).toEqual([{ uri: 'berm://sample/usage', mimeType: 'text/markdown', text: '# sample\n\nRead me first.' }]);
    });

    it('relays list changes and events', async () => {
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

    it('answers with a clear error while bermd is down, keeps trying, and picks up again when it is back', async () => {
      const port = d.port;
      expect(await d.stop()).toBe(0);
      const down = await client.callTool({ name: 'basic.echo', arguments: {} }).catch((e: unknown) => e);
      expect(down).toBeInstanceOf(McpError);
      expect((down as McpError).code).toBe(-32000);
      expect((down as McpError).message).toMatch(/bermd is not reachable at http:\/\/127\.0\.0\.1:\d+\/mcp .*berm mcp keeps trying/);
      await stderr.wait(/lost bermd at .*; retrying/);

      // Back on the same address with the same state: a new session, opened by the relay, and the
      // client told its lists may have changed.
      const told = toolsChanged.next();
      d = await startDaemon({ stateDir, port });
      await told;
      await stderr.wait(/bermd answers again/);
      expect(valueOf((await client.callTool({ name: 'basic.echo', arguments: { back: true } })) as never)).toEqual({ back: true });
      // The log level the client set is the new session's too.
      const before = messages.received.length;
      await client.callTool({ name: 'relay.emit', arguments: { event: 'reading', fields: { celsius: 2 } } });
      expect(messages.received.slice(before)).toHaveLength(1);
    });
  });

  describe('to a 2026-07-28 client (the v2 SDK)', () => {
    let client: ModernClient;
    const stderr = new StderrLines();
    const toolsChanged = new Arrivals();
    const messages = new Arrivals<unknown>();

    beforeAll(async () => {
      const transport = new ModernStdio({ ...recipe(d.url), stderr: 'pipe' });
      transport.stderr!.on('data', (c: Buffer) => stderr.feed(c));
      client = new ModernClient({ name: 'stdio-2026', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      client.setNotificationHandler('notifications/tools/list_changed', () => toolsChanged.push());
      client.setNotificationHandler('notifications/message', (n) => messages.push(n.params));
      await client.connect(transport);
    });
    afterAll(async () => {
      await client?.close();
    });

    it('discovers bermd, lists, calls, reads and hears its own events', async () => {
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
      await client.callTool({
        name: 'relay.emit',
        arguments: { event: 'reading', fields: { celsius: 3 } },
        _meta: { [LOG_LEVEL_META_KEY]: 'info' },
      });
      expect(messages.received).toEqual([
        { level: 'notice', logger: 'relay', data: { event: 'reading', fields: { celsius: 3 }, tool: 'emit' } },
      ]);
    });

    it('cancels a call by closing its request, when the client sends notifications/cancelled', async () => {
      const controller = new AbortController();
      const spinning = client.callTool({ name: 'relay.spin', arguments: {} }, { signal: controller.signal }).catch((e: unknown) => e);
      await d.waitForLog((e) => e.msg === SPIN_LOG.message && e.harness === 'relay');
      controller.abort('enough');
      expect(await spinning).toBeInstanceOf(Error);
      // bermd stopped the guest: the relay closed the request the cancellation named.
      await d.waitForLog((e) => e.msg === 'call cancelled by its caller' && e.harness === 'relay' && e.tool === 'spin');
      expect(valueOf(await client.callTool({ name: 'basic.echo', arguments: { after: 'cancel' } }))).toEqual({ after: 'cancel' });
    });

    it('relays a listen stream, and keeps it across a restart of bermd', async () => {
      const subscription = await client.listen({ toolsListChanged: true });
      let told = toolsChanged.next();
      await deploy(d.url, 'newer', await harnessImage(sampleManifest()));
      await told;

      const port = d.port;
      expect(await d.stop()).toBe(0);
      const down = await client.callTool({ name: 'basic.echo', arguments: {} }).catch((e: unknown) => e);
      expect((down as ProtocolError).message).toMatch(/bermd is not reachable at .*berm mcp keeps trying/);
      told = toolsChanged.next();
      d = await startDaemon({ stateDir, port });
      await told;
      expect(valueOf(await client.callTool({ name: 'basic.echo', arguments: { again: 1 } }))).toEqual({ again: 1 });
      // Still the client's subscription: a deploy now reaches it.
      told = toolsChanged.next();
      await deploy(d.url, 'newest', await harnessImage(sampleManifest()));
      await told;
      await subscription.close();
    });
  });

  it('sends BERM_TOKEN as the bearer token, and says so when bermd refuses it', async () => {
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
      expect((refused as Error).message).toMatch(/refused the token \(401\): set BERM_TOKEN/);
      await bad.close();
    } finally {
      await guarded.stop();
      await removeDir(guarded.stateDir);
      await removeDir(tokenDir);
    }
  });
});
