// What `berm mcp` does when things go wrong around it, each against a real process of its own: a stale
// session bermd answers 404, lines on stdin that are not JSON-RPC, bermd at its session cap, stdout
// closed under it, and a server at BERM_URL whose answers carry escape sequences. A raw client writes
// its stdin and reads its stdout a message at a time; each wait is for a message, a log line or an exit.
// Each describe starts what it needs; the bound on a line of stdin is tested on the reader itself.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { basicImage } from '../../../test/helpers/guest.js';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import { connect, deploy } from '../../bermd/test/mcp-client.js';
import { INITIALIZE, MCP_HEADERS, rawRequest } from '../../bermd/test/raw-http.js';
import { JsonRpcLines } from '../dist/mcp-stdin.js';
import { controlCharacters } from './helpers/cli.js';
import { initialize, type Message, RawClient } from './helpers/stdio.js';

const clients: RawClient[] = [];

/** A raw client of `berm mcp` relaying to `url`, ended after the test. */
function bridge(url: string): RawClient {
  const client = RawClient.start(url);
  clients.push(client);
  return client;
}

afterEach(async () => {
  for (const client of clients.splice(0)) {
    if (client.child.exitCode === null && client.child.signalCode === null) client.child.kill();
    await client.exit;
  }
});

/** A bermd with the basic harness deployed, started with `args`; its log says when sessions open and close. */
function daemonFor(args: string[]): { d: RunningDaemon } {
  const held = {} as { d: RunningDaemon };
  beforeAll(async () => {
    held.d = await startDaemon({ args: [...args, '--log-level', 'debug'] });
    await deploy(held.d.url, 'basic', (await basicImage()).bytes);
  });
  afterAll(async () => {
    await held.d?.stop();
    if (held.d) await removeDir(held.d.stateDir);
  });
  return held;
}

function toolNames(answer: Message): string[] {
  return ((answer.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
}

describe('a session bermd no longer knows', () => {
  // One session at most: a client that initializes on bermd directly lets the relay's idle session go.
  const held = daemonFor(['--max-sessions', '1']);

  it("is answered 404, and the relay opens a new one with the client's initialize and sends the request again", async () => {
    const { d } = held;
    const client = bridge(d.url);
    // No notifications/initialized: the SDK's transport opens the session's stream only on it, and a session
    // whose stream is open is never let go. Without it the relay's session is idle between requests, as one
    // whose stream has dropped is, and bermd may close it.
    client.send(initialize(1));
    expect(await client.answer(1)).toMatchObject({ result: { serverInfo: { name: 'bermd' } } });
    const first = await d.waitForLog((e) => e.msg === 'mcp session opened');

    const direct = await rawRequest(d.url, { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: INITIALIZE });
    expect(direct.status).toBe(200);
    await d.waitForLog((e) => e.session === first.session && String(e.msg).includes('at the session cap'));

    client.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(toolNames(await client.answer(2))).toContain('basic.echo');
    await client.stderr.wait(/bermd no longer knows the session; opening a new one/);
    // The relay's new session took the one slot: the direct client's is gone now.
    const directId = direct.headers['mcp-session-id'] as string;
    await d.waitForLog((e) => e.session === directId && String(e.msg).includes('at the session cap'));
    // Answered from the new session, after the client was told its lists may have changed.
    const index = (m: Message): number => client.messages.indexOf(m);
    const changed = await client.next((m) => m.method === 'notifications/tools/list_changed');
    expect(index(changed)).toBeLessThan(index(await client.answer(2)));

    client.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'basic.echo', arguments: { again: true } } });
    expect(await client.answer(3)).toMatchObject({ result: { content: [{ type: 'text', text: '{"again":true}' }] } });
    expect(await client.end()).toBe(0);
  });
});

describe('lines on stdin that are not JSON-RPC messages', () => {
  const held = daemonFor([]);

  it('are answered with a parse error or an invalid request, and the relay goes on serving', async () => {
    const client = bridge(held.d.url);
    client.send(initialize(1));
    await client.answer(1);
    client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

    client.send('this is not JSON {');
    const parse = await client.next((m) => (m.error as { code?: number } | undefined)?.code === -32700);
    expect(parse).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: a line on stdin is not JSON; berm mcp reads one JSON-RPC message a line' },
    });

    // JSON, but not JSON-RPC: a method that is not a string, with an id the client waits on; a batch; a bare string.
    client.send({ jsonrpc: '2.0', id: 7, method: 5 });
    expect(await client.answer(7)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32600,
        message: 'Invalid Request: a line on stdin is JSON but not a JSON-RPC 2.0 request, notification or response',
      },
    });
    client.send('[{"jsonrpc": "2.0", "id": 8, "method": "tools/list"}]');
    client.send('"just a string"');
    // The batch and the string have no id to answer with. Answered as they are read, without bermd, both
    // answers are written before that of a request sent after them.
    client.send({ jsonrpc: '2.0', id: 9, method: 'tools/list' });
    expect(toolNames(await client.answer(9))).toContain('basic.echo');
    const invalid = client.messages.filter((m) => (m.error as { code?: number } | undefined)?.code === -32600);
    expect(invalid.map((m) => m.id)).toEqual([7, undefined, undefined]);
    expect(await client.end()).toBe(0);
    // Read to its end once the process has exited: stderr is a pipe of its own, in no order with stdout.
    expect(client.stderr.lines.filter((l) => l.includes('not a JSON-RPC message'))).toHaveLength(4);
  });
});

describe('bermd at its session cap', () => {
  const held = daemonFor(['--max-sessions', '1']);

  it("answers the client's initialize with bermd's own error (session-cap), and initializes once a session ends", async () => {
    const { d } = held;
    // A client that holds the one session, its stream open: in use, so bermd lets nothing go.
    const holder = await connect(d.url);
    const session = holder.transport.sessionId;
    await d.waitForLog((e) => e.msg === 'mcp notification stream opened' && e.session === session);

    const client = bridge(d.url);
    client.send(initialize(1));
    expect(await client.answer(1)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32000,
        message: 'bermd is at its cap of 1 MCP sessions, all in use (--max-sessions); try again when one ends',
        data: { code: 'session-cap' },
      },
    });
    await client.stderr.wait(/^berm mcp: bermd: answered 503: bermd is at its cap of 1 MCP sessions/);

    await holder.close();
    client.send(initialize(2));
    expect(await client.answer(2)).toMatchObject({ result: { serverInfo: { name: 'bermd' } } });
    client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    client.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    expect(toolNames(await client.answer(3))).toContain('basic.echo');
    expect(await client.end()).toBe(0);
  });
});

describe('stdout closed under the relay', () => {
  const held = daemonFor([]);

  it('ends it: the session on bermd is closed, and it exits 0 without a stack trace', async () => {
    const { d } = held;
    const client = bridge(d.url);
    client.send(initialize(1));
    await client.answer(1);
    const opened = await d.waitForLog((e) => e.msg === 'mcp session opened');

    // The client stops reading: the answer to the next request meets a closed pipe (EPIPE).
    client.child.stdout.destroy();
    client.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(await client.exit).toBe(0);
    await d.waitForLog((e) => e.msg === 'mcp session closed' && e.session === opened.session);
    const stderr = Buffer.concat(client.stderrBytes).toString('utf8');
    expect(stderr).toContain('berm mcp: stdout is closed: the client has gone; ending\n');
    expect(stderr).not.toMatch(/^\s+at |Error:|node:internal/m);
  });
});

describe('a server at BERM_URL that is not bermd', () => {
  const ESCAPES = '\u001b[2J\u001b]0;retitled\u0007\u009b31m';
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    // An initialize is answered with a page, anything else with a JSON-RPC error: both carry escape sequences.
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        if (body.includes('"initialize"')) {
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`broken ${ESCAPES} page${'.'.repeat(1000)}`);
        } else {
          const id = (JSON.parse(body) as { id?: unknown }).id ?? null;
          res
            .writeHead(503, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: `busy ${ESCAPES} now` } }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('gets none of their control characters through to stderr, or into the answers the relay writes', async () => {
    const client = bridge(url);
    client.send(initialize(1));
    const refused = (await client.answer(1)).error as { code: number; message: string };
    expect(refused.code).toBe(-32000);
    // The page is quoted as far as its first 300 characters.
    const page = `broken ␛[2J␛]0;retitled␇�31m page${'.'.repeat(1000)}`.slice(0, 300);
    expect(refused.message).toBe(`bermd at ${url}/mcp answered 500: ${page}...`);

    client.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(await client.answer(2)).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'busy ␛[2J␛]0;retitled␇�31m now' } });
    expect(await client.end()).toBe(0);

    const stderr = Buffer.concat(client.stderrBytes);
    expect(controlCharacters(stderr)).toEqual([]);
    expect(controlCharacters(Buffer.concat(client.stdoutBytes))).toEqual([]);
    const text = stderr.toString('utf8');
    expect(text).toContain(`berm mcp: bermd: answered 500: ${page}...\n`);
    expect(text).toContain('berm mcp: bermd: answered 503: busy ␛[2J␛]0;retitled␇�31m now\n');
  });
});

describe("the relay's reading of stdin", () => {
  it('ends the stream at a line longer than the bound, as the SDK transport does at its own', async () => {
    const refused: unknown[] = [];
    const lines = new JsonRpcLines((answer) => refused.push(answer), 64);
    const out: string[] = [];
    lines.on('data', (c: Buffer) => out.push(c.toString('utf8')));
    const failed = new Promise<Error>((resolve) => lines.once('error', resolve));
    lines.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\r\n');
    lines.write(`{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "${'x'.repeat(64)}`);
    expect((await failed).message).toBe('a line of more than 64 characters on stdin; a message is one line');
    expect(out.join('')).toBe('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n');
    expect(refused).toEqual([]);
  });
});
