// Effect contracts as bermd serves them: `--require-effects` refusing a deploy that reaches outside with
// tools of undeclared effect, and each declared effect listed through /mcp as MCP's hints and the
// `berm/effect` member of the tool's `_meta`, in both generations, by the official SDK clients.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManifestData, ToolSpec } from '@berm/manifest';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { connect, connectModern, deploy, put } from './mcp-client.js';

const orderArgs = { type: 'object', properties: { item: { type: 'string' }, key: { type: 'string' } }, required: ['item', 'key'] };

/** A shop reaching an API: `place` writes with a reconcile query, `notify` writes once, `cancel` is left undeclared unless given. */
function shop(
  cancel: Partial<ToolSpec> = {},
  syscalls: Record<string, string[]> = { 'berm.http.fetch': ['api.example.com'] },
): ManifestData {
  return sampleManifest({
    tools: [
      {
        name: 'place',
        description: 'Places an order.',
        arguments: orderArgs,
        effect: { kind: 'external_write', retry: 'idempotency_key', reconcile: 'find', compensation: 'cancel' },
      },
      { name: 'find', description: 'Finds an order.', arguments: orderArgs, query: true },
      { name: 'notify', description: 'Sends a message.', arguments: { type: 'object' }, effect: { kind: 'external_write', retry: 'none' } },
      { name: 'cancel', description: 'Cancels an order.', arguments: { type: 'object' }, ...cancel },
      { name: 'total', description: 'Adds up.', arguments: { type: 'object' }, effect: { kind: 'none' } },
    ],
    deps: { programs: [], syscalls, secrets: [] },
  });
}

describe('bermd --require-effects', () => {
  let d: RunningDaemon;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--serve', 'berm.http.fetch', '--require-effects', '--tool-separator', '__'] });
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  it('refuses an image reaching outside with a tool of undeclared effect, naming it, and keeps nothing', async () => {
    const res = await put(`${d.url}/harnesses/shop`, await harnessImage(shop()));
    expect(res.status).toBe(422);
    const { error } = (await res.json()) as { error: { code: string; message: string; tools: string[]; syscalls: string[] } };
    expect(error.code).toBe('effect-undeclared');
    expect(error.tools).toEqual(['cancel']);
    expect(error.syscalls).toEqual(['berm.http.fetch']);
    expect(error.message).toContain('"cancel"');
    expect(error.message).toContain('@effect');
    expect((await fetch(`${d.url}/harnesses/shop`)).status).toBe(404);
  });

  it('deploys the same program once every tool that is not a query declares its effect', async () => {
    const res = await put(`${d.url}/harnesses/declared`, await harnessImage(shop({ effect: { kind: 'external_write', retry: 'none' } })));
    expect(res.status).toBe(201);
  });

  it('deploys a program of undeclared effects that reaches nothing outside', async () => {
    const res = await put(`${d.url}/harnesses/inside`, await harnessImage(shop({}, {})));
    expect(res.status).toBe(201);
  });
});

describe.each([
  { way: 'with the fast path', args: [] },
  { way: 'with --mcp-fast-path false', args: ['--mcp-fast-path', 'false'] },
])('/mcp: declared effects as hints and _meta, $way', ({ args }) => {
  let d: RunningDaemon;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--serve', 'berm.http.fetch', '--tool-separator', '__', ...args] });
    await deploy(d.url, 'shop', await harnessImage(shop()));
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  /** What each generation's client lists of the shop: each tool's hints and effect `_meta`, by name. */
  async function listings(): Promise<Array<Record<string, { annotations: unknown; effect: unknown }>>> {
    const legacy = await connect(d.url);
    const modern = await connectModern(d.url);
    try {
      const lists = [(await legacy.client.listTools()).tools, (await modern.client.listTools()).tools];
      return lists.map((tools) =>
        Object.fromEntries(
          tools.map((t) => [t.name, { annotations: t.annotations, effect: (t._meta as Record<string, unknown>)['berm/effect'] }]),
        ),
      );
    } finally {
      await legacy.close();
      await modern.close();
    }
  }

  it('lists the same hints and effects in both generations', async () => {
    for (const tools of await listings()) {
      expect(tools.shop__place).toEqual({
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
        effect: { kind: 'external_write', retry: 'idempotency_key', reconcile: 'shop__find', compensation: 'shop__cancel' },
      });
      expect(tools.shop__notify).toEqual({
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
        effect: { kind: 'external_write', retry: 'none' },
      });
      expect(tools.shop__total).toEqual({
        annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
        effect: { kind: 'none' },
      });
      // Undeclared: served as before effects were declared.
      expect(tools.shop__cancel).toEqual({ annotations: { readOnlyHint: false, openWorldHint: true }, effect: undefined });
      expect(tools.shop__find).toEqual({
        annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
        effect: undefined,
      });
    }
  });
});
