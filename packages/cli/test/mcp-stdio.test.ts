// `berm mcp`'s end toward its client (mcp-stdio.ts), on streams of its own: messages cut across chunks,
// what is not a message reported and passed over, stdin's end, a full stdout; and what the relay loads
// to answer a client's `initialize` and `tools/list`, against a real bermd: nothing of the MCP SDK.
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startDaemon, type RunningDaemon } from '../../bermd/test/daemon.js';
import { packagesLoaded } from '../../../test/helpers/packages.js';
import { StdioLink } from '../dist/mcp-stdio.js';

/** A link over fresh streams, recording what it reads and reports. */
function linked(output: Writable = new PassThrough()) {
  const input = new PassThrough();
  const link = new StdioLink(input, output);
  const messages: unknown[] = [];
  const errors: Error[] = [];
  let closed = 0;
  let ended: () => void = () => {};
  const closing = new Promise<void>((resolve) => (ended = resolve));
  link.onmessage = (message) => messages.push(message);
  link.onerror = (e) => errors.push(e);
  link.onclose = () => {
    closed++;
    ended();
  };
  link.start();
  return { input, output, link, messages, errors, closing, closed: () => closed };
}

/** Resolves once `input` has been read (its 'data' listeners have run for what was written). */
function read(input: PassThrough, text: string): Promise<void> {
  return new Promise((resolve) => {
    input.once('data', () => setImmediate(resolve));
    input.write(text);
  });
}

describe("berm mcp's stdio link", () => {
  it('reads a message a line, whole when it came in pieces, CRLF or LF', async () => {
    const { input, messages } = linked();
    await read(input, '{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n{"jsonrpc":"2.0",');
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    await read(input, '"method":"notifications/initialized"}\n');
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]);
  });

  it('reports a line that is JSON but no message and goes on; one that is not JSON is passed over', async () => {
    const { input, messages, errors } = linked();
    await read(input, '{"not":"a message"}\nnot json\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 2, method: 'ping' }]);
    expect(errors).toHaveLength(1);
  });

  it('closes once when stdin ends, and refuses to send after', async () => {
    const { input, link, closing, closed } = linked();
    const gone = new Promise((resolve) => input.once('close', resolve));
    input.end();
    await closing;
    // stdin's 'close' follows its 'end': the link closed on the first, and not again.
    await gone;
    expect(closed()).toBe(1);
    await expect(link.send({ jsonrpc: '2.0', method: 'notifications/initialized' })).rejects.toThrow(/closed/);
  });

  it('writes a message a line, waiting for a drain when stdout is full', async () => {
    const written: string[] = [];
    let release: (() => void) | undefined;
    const output = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, callback) {
        written.push(chunk.toString('utf8'));
        release = callback;
      },
    });
    const { link } = linked(output);
    let sent = false;
    const sending = link.send({ jsonrpc: '2.0', id: 3, result: {} }).then(() => {
      sent = true;
    });
    expect(written).toEqual(['{"jsonrpc":"2.0","id":3,"result":{}}\n']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toBe(false);
    release!();
    await sending;
    expect(sent).toBe(true);
  });
});

describe('berm mcp loads', () => {
  let daemon: RunningDaemon;
  beforeAll(async () => {
    daemon = await startDaemon();
  });
  afterAll(async () => {
    await daemon?.stop();
    if (daemon) await removeDir(daemon.stateDir);
  });

  it("nothing of the MCP SDK, nor zod, to answer a client's initialize and its next request", async () => {
    const module = (path: string) => JSON.stringify(new URL(path, import.meta.url).href);
    const { packages, stdout } = await packagesLoaded(`
      const { PassThrough } = await import('node:stream');
      await import(${module('../dist/commands/mcp.js')});
      const { McpBridge, mcpEndpoint } = await import(${module('../dist/mcp-bridge.js')});
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const bridge = new McpBridge({ endpoint: mcpEndpoint(${JSON.stringify(daemon.url)}), stdin, stdout, log: () => {} });
      await bridge.start();
      let out = '';
      const lines = (count) => new Promise((resolve) => {
        const read = (chunk) => {
          out += chunk;
          if (out.split('\\n').length > count) {
            stdout.off('data', read);
            resolve();
          }
        };
        stdout.on('data', read);
        read('');
      });
      stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '0' } } }) + '\\n');
      await lines(1);
      stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\\n');
      stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) + '\\n');
      await lines(2);
      stdin.end();
      await bridge.done;
      process.stdout.write(out);
    `);
    const [first, second] = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(first).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-11-25', serverInfo: { name: 'bermd' } } });
    expect(second).toMatchObject({ jsonrpc: '2.0', id: 2, result: { tools: [] } });
    // The hook saw what the relay does load: its silence about the SDK means something.
    expect(packages).toContain('@oclif/core');
    expect([...packages].filter((name) => name.startsWith('@modelcontextprotocol/') || name === 'zod')).toEqual([]);
  });
});
