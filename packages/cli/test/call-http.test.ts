// `berm call` speaks its requests to /mcp itself (mcp-call.ts, over node:http, not the MCP SDK's client):
// against a real bermd started with --access, the answer of a principal that may call, the refusals of
// one that may not and of a token bermd does not know, and a call's log lines and events read from the
// Server-Sent Events answer bermd gives when a call reports them. call.test.ts holds the documents it
// prints to crab run's; the framing and the header encoding are checked here on their own too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor } from '@berm/cli';
import { type AccessFile, writeAccess } from '../../bermd/test/access.js';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from '../../bermd/test/daemon.js';
import { relayImage } from '../../../test/helpers/guest.js';
import { packagesLoaded } from '../../../test/helpers/packages.js';
import { messagesOf, mcpNameHeader } from '../dist/mcp-call.js';
import { runCli, Scratch, type CliResult } from './helpers/cli.js';

const CLI_TIMEOUT = 120_000;

let daemon: RunningDaemon;
let dir: string;
let access: AccessFile;
let scratch: Scratch;

beforeAll(async () => {
  dir = await tempDir('berm-call-http-');
  access = await writeAccess(dir, [
    { name: 'deployer', scopes: ['berm:read', 'berm:deploy'] },
    { name: 'caller', scopes: ['berm:read', 'berm:call'] },
    { name: 'reader', scopes: ['berm:read'] },
  ]);
  daemon = await startDaemon({ args: ['--access', access.file] });
  scratch = await Scratch.create();
  const relay = await scratch.write('relay.wasm', (await relayImage()).bytes);
  const deployed = await runCli(['deploy', 'relay', relay], { env: { BERM_URL: daemon.url, BERM_TOKEN: access.tokens.deployer } });
  expect(deployed.code).toBe(0);
}, CLI_TIMEOUT);

afterAll(async () => {
  await daemon?.stop();
  if (daemon) await removeDir(daemon.stateDir);
  if (dir) await removeDir(dir);
  await scratch?.remove();
});

function call(token: string | undefined, args: string[]): Promise<CliResult> {
  const env: Record<string, string> = { BERM_URL: daemon.url };
  if (token !== undefined) env.BERM_TOKEN = token;
  return runCli(['call', ...args], { bin: 'berm', env });
}

/** The request berm call sends for a call of relay.log, sent here with fetch to see how bermd frames its answer. */
function logRequest(token: string): Promise<Response> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'test', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/logLevel': 'debug',
  };
  return fetch(`${daemon.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'relay.log',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'relay.log', arguments: { level: 'warn', message: 'hot' }, _meta: meta },
    }),
  });
}

describe('berm call over its own HTTP', { timeout: CLI_TIMEOUT }, () => {
  it("answers a principal that may call with the tool's result, sending its token", async () => {
    const done = await call(access.tokens.caller, ['relay.emit', '{"event": "reading", "fields": {"celsius": 7}}', '--json']);
    expect(done.stderr).toBe('');
    expect(JSON.parse(done.stdout)).toEqual({
      result: null,
      content: [{ type: 'text', text: '{"ok":null}' }],
      is_error: false,
      events: [{ harness: 'relay', tool: 'emit', event: 'reading', fields: { celsius: 7 } }],
      logs: [],
    });
    expect(done.code).toBe(0);
  });

  it('reads the log lines from the Server-Sent Events bermd answers a call that reports them with', async () => {
    const raw = await logRequest(access.tokens.caller!);
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = messagesOf(raw.headers.get('content-type')!, await raw.text()) as Array<{ method?: string; id?: unknown }>;
    expect(messages.map((m) => m.method ?? `answer ${String(m.id)}`)).toEqual(['notifications/message', 'answer 1']);

    const done = await call(access.tokens.caller, ['relay.log', '{"level": "warn", "message": "hot"}', '--json']);
    expect(JSON.parse(done.stdout)).toMatchObject({ logs: [{ harness: 'relay', tool: 'log', level: 'warn', message: 'hot' }], events: [] });
    expect(done.code).toBe(0);
  });

  it('says which scope the token lacks when bermd refuses the call for one, with its exit status', async () => {
    const refused = await call(access.tokens.reader, ['relay.emit', '{"event": "reading", "fields": {}}', '--json']);
    const { error } = JSON.parse(refused.stdout) as { error: { code: string; message: string; scope?: string; status?: number } };
    expect(error.code).toBe('insufficient-scope');
    expect(error.status).toBe(403);
    expect(error.scope).toMatch(/berm:call/);
    expect(error.message).toBe(`bermd at ${daemon.url} refused the call: the token lacks ${error.scope}`);
    expect(refused.code).toBe(exitCodeFor('insufficient-scope'));
  });

  it('says bermd refused the token, given or missing, with what to do', async () => {
    const wrong = await call('not-a-token-bermd-knows', ['relay.emit', '{"event": "e", "fields": {}}']);
    expect(wrong.stderr).toBe(
      `berm: bermd at ${daemon.url} refused the token given with --token or BERM_TOKEN (bermd at ${daemon.url} refused the token (401)): check it, or leave both unset to use what berm login stores\n`,
    );
    expect(wrong.code).toBe(exitCodeFor('unauthorized'));
    // No token given, and no login stored (the tests' environment holds none).
    const none = await call(undefined, ['relay.emit', '{"event": "e", "fields": {}}', '--json']);
    expect(JSON.parse(none.stdout)).toEqual({ error: expect.objectContaining({ code: 'unauthorized', status: 401 }) });
    expect(none.code).toBe(exitCodeFor('unauthorized'));
  });
});

describe('berm call loads', { timeout: CLI_TIMEOUT }, () => {
  it("none of the MCP SDK to call a tool, the command's module included", async () => {
    const { packages, stdout } = await packagesLoaded(`
      await import(${JSON.stringify(new URL('../dist/commands/call.js', import.meta.url).href)});
      const { openMcpCall } = await import(${JSON.stringify(new URL('../dist/mcp-call.js', import.meta.url).href)});
      const mcp = await openMcpCall(${JSON.stringify(daemon.url)}, ${JSON.stringify(access.tokens.caller)});
      const { result, events } = await mcp.call('relay.emit', { event: 'reading', fields: { celsius: 7 } });
      await mcp.close();
      process.stdout.write(JSON.stringify({ content: result.content, events }));
    `);
    expect(JSON.parse(stdout)).toEqual({
      content: [{ type: 'text', text: '{"ok":null}' }],
      events: [{ harness: 'relay', tool: 'emit', event: 'reading', fields: { celsius: 7 } }],
    });
    // The hook saw what the command does load: its silence about the SDK means something.
    expect(packages).toContain('@oclif/core');
    expect([...packages].filter((name) => name.startsWith('@modelcontextprotocol/') || name === 'zod')).toEqual([]);
  });
});

describe("berm call's framing", () => {
  it('reads an answer given as one JSON document, or as events each carrying one, whatever their line ends', () => {
    expect(messagesOf('application/json', '{"jsonrpc":"2.0","id":1,"result":{}}')).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    const stream = 'event: message\r\nid: 7\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: a comment\n\nevent: message\ndata:{"b":2}\n\n';
    expect(messagesOf('text/event-stream; charset=utf-8', stream)).toEqual([{ a: 1 }, { b: 2 }]);
    // A last event the stream ended without its blank line is still read.
    expect(messagesOf('text/event-stream', 'data: {"c":3}')).toEqual([{ c: 3 }]);
  });

  it("sends a tool's name in Mcp-Name as it is when it is printable ASCII, else in Base64 between MCP's sentinels", () => {
    expect(mcpNameHeader('relay.emit')).toBe('relay.emit');
    expect(mcpNameHeader('relay.été')).toBe(`=?base64?${Buffer.from('relay.été').toString('base64')}?=`);
    expect(mcpNameHeader(' padded')).toBe(`=?base64?${Buffer.from(' padded').toString('base64')}?=`);
    expect(mcpNameHeader('=?base64?abc?=')).toBe(`=?base64?${Buffer.from('=?base64?abc?=').toString('base64')}?=`);
  });
});
