// The session's MCP server without HTTP: the SDK's client over its in-memory transport, a real tool
// runtime on worker threads, and the catalog built as a deploy builds it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { LoggingMessageNotificationSchema, type CallToolResult, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Use } from '../dist/deploy/index.js';
import { buildMcpServer, ToolCatalog, type EventMessage, type McpCore } from '../dist/mcp/index.js';
import { ToolRunner } from '../dist/runtime/index.js';
import { relayImage, type GuestImage } from '../../../test/helpers/guest.js';

describe('buildMcpServer over an in-memory transport', () => {
  const runner = new ToolRunner({ threads: 1 });
  const catalog = new ToolCatalog('/');
  const uses: Array<{ harness: string } & Use> = [];
  const broadcast: EventMessage[] = [];
  const core: McpCore = {
    catalog,
    call: (harness, tool, args, options) => runner.call(harness, tool, args, options),
    recordUse: (harness, use) => uses.push({ harness, ...use }),
    logger: pino({ level: 'silent' }),
    version: '9.9.9',
    broadcastEvent: (message) => broadcast.push(message),
  };
  let client: Client;
  const messages: LoggingMessageNotification['params'][] = [];

  async function install(name: string, image: GuestImage): Promise<void> {
    const module = await runner.compile(image.bytes);
    runner.setHarness(name, runner.prepareHarness({ module, manifest: image.manifest, digest: `sha256:${name}` }));
    catalog.set(catalog.prepare(name, image.manifest));
  }

  beforeAll(async () => {
    await install('relay', await relayImage(['relay']));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await buildMcpServer(core).connect(serverSide);
    client = new Client({ name: 'in-memory', version: '0' });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
    await client.connect(clientSide);
  });
  afterAll(async () => {
    await client?.close();
    await runner.close();
  });

  it('lists with the configured separator and names it in the instructions', async () => {
    expect(client.getServerVersion()).toEqual({ name: 'bermd', version: '9.9.9' });
    expect(client.getInstructions()).toContain('{harness}/{tool}');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(['relay/call', 'relay/chain', 'relay/emit', 'relay/forecast', 'relay/log', 'relay/log_twice', 'relay/spin']);
  });

  it('runs a call, records what it reached, and sends its events to a caller that asked for logs', async () => {
    await client.setLoggingLevel('notice');
    const result = (await client.callTool({
      name: 'relay/emit',
      arguments: { event: 'reading', fields: { celsius: 3 } },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const expected = { level: 'notice', logger: 'relay', data: { event: 'reading', fields: { celsius: 3 }, tool: 'emit' } };
    expect(messages).toEqual([expected]);
    expect(broadcast).toEqual([expected]);
    expect(uses).toEqual([
      { harness: 'relay', tool: 'emit' },
      { harness: 'relay', event: 'reading' },
    ]);

    uses.length = 0;
    const nested = (await client.callTool({
      name: 'relay/call',
      arguments: { program: 'relay', tool: 'forecast', args: { days: 1 } },
    })) as CallToolResult;
    expect(JSON.parse((nested.content[0] as { text: string }).text)).toEqual({ ok: { days: 1 } });
    expect(uses).toEqual([
      { harness: 'relay', tool: 'call' },
      { harness: 'relay', tool: 'forecast' },
    ]);
  });

  it('sends no events to a session above their level', async () => {
    await client.setLoggingLevel('error');
    const before = messages.length;
    await client.callTool({ name: 'relay/emit', arguments: { event: 'reading', fields: { celsius: 4 } } });
    expect(messages).toHaveLength(before);
    expect(broadcast).toHaveLength(2);
  });
});
