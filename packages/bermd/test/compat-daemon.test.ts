// The compatibility gate end to end: a real bermd whose tools are used through /mcp (or whose past
// use is written into its state directory before it starts, in the store's own format), redeployed
// over HTTP.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManifestData } from '@berm/manifest';
import { digestOf } from '../dist/deploy/index.js';
import { basicImage, basicManifest, basicWat, relayImage, relayManifest, relayWat } from '../../../test/helpers/guest.js';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { buildImage } from '../../../test/helpers/wat.js';
import { BERMD_BIN, exited, removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { connect, put, valueOf, type McpConnection } from './mcp-client.js';
import { seedHarness } from './seed.js';

const DAY = 24 * 3600 * 1000;

interface GatedBreak {
  code: string;
  tool?: string;
  event?: string;
  path: string;
  message: string;
  last_used_at: string | null;
  used: boolean;
}

interface Detail {
  digest: string;
  tools: string[];
  last_used_at: string | null;
  usage: { tools: Record<string, string | null>; events: Record<string, string | null> };
}

async function detail(url: string, name: string): Promise<Detail> {
  const res = await fetch(`${url}/harnesses/${name}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Detail;
}

async function storedImage(url: string, name: string): Promise<Buffer> {
  return Buffer.from(await (await fetch(`${url}/harnesses/${name}/image`)).arrayBuffer());
}

/** The relay guest under a changed manifest: its exports stay, so only the compatibility gate can refuse it. */
function relayWith(change: (m: ManifestData) => void): Promise<Uint8Array> {
  const manifest = relayManifest();
  change(manifest);
  return buildImage(relayWat(), manifest);
}

const tool = (m: ManifestData, name: string) => m.tools.find((t) => t.name === name)!;

async function call(c: McpConnection, name: string, args: Record<string, unknown>): Promise<unknown> {
  return valueOf((await c.client.callTool({ name, arguments: args })) as CallToolResult);
}

describe('the compatibility gate of a running bermd', { timeout: 120_000 }, () => {
  let d: RunningDaemon;
  let c: McpConnection;
  let usedAt: Detail['usage'];

  beforeAll(async () => {
    d = await startDaemon();
    const res = await put(`${d.url}/harnesses/relay`, (await relayImage()).bytes);
    expect(res.status).toBe(201);
    c = await connect(d.url);
  });
  afterAll(async () => {
    await c?.close();
    await d.stop();
    await removeDir(d.stateDir);
  });

  it('records the last use of each tool called and each event emitted through /mcp', async () => {
    expect((await detail(d.url, 'relay')).usage).toEqual({
      tools: { call: null, log: null, emit: null, log_twice: null, chain: null, forecast: null, spin: null },
      events: { reading: null },
    });
    const before = new Date().toISOString();
    expect(await call(c, 'relay.forecast', { days: 3 })).toEqual({ days: 3 });
    expect(await call(c, 'relay.emit', { event: 'reading', fields: { celsius: 4 } })).toEqual({ ok: null });
    const after = new Date().toISOString();

    const h = await detail(d.url, 'relay');
    usedAt = h.usage;
    for (const used of [h.usage.tools.forecast, h.usage.tools.emit, h.usage.events.reading, h.last_used_at]) {
      expect(used! >= before && used! <= after, `${used} within [${before}, ${after}]`).toBe(true);
    }
    expect(h.usage.tools.spin).toBeNull();
    expect(h.usage.tools.call).toBeNull();
  });

  it('reports the break of a tool no caller used, and deploys', async () => {
    const next = await relayWith((m) => (m.tools = m.tools.filter((t) => t.name !== 'spin')));
    const res = await put(`${d.url}/harnesses/relay`, next);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { digest: string; reported: GatedBreak[] };
    expect(body.digest).toBe(digestOf(next));
    expect(body.reported).toEqual([
      { code: 'tool-removed', tool: 'spin', path: '', message: 'tool `spin` was removed', last_used_at: null, used: false },
    ]);
    expect((await detail(d.url, 'relay')).digest).toBe(digestOf(next));
  });

  it('refuses (409) a break of a used tool and keeps the stored harness, then lets it through with force=true', async () => {
    const stored = await storedImage(d.url, 'relay');
    const next = await relayWith((m) => {
      m.tools = m.tools.filter((t) => t.name !== 'spin');
      const forecast = tool(m, 'forecast');
      forecast.arguments = {
        type: 'object',
        properties: { days: { type: 'integer', format: 'uint32', minimum: 0 }, units: { type: 'string' } },
        required: ['days', 'units'],
      };
    });

    const res = await put(`${d.url}/harnesses/relay`, next);
    expect(res.status).toBe(409);
    const { error } = (await res.json()) as {
      error: { code: string; message: string; breaks: GatedBreak[]; reported: GatedBreak[]; window_seconds: number };
    };
    expect(error.code).toBe('breaks-callers');
    expect(error.window_seconds).toBe(30 * 24 * 3600);
    expect(error.message).toMatch(
      /^the image would break callers of relay: 1 break in tool forecast, used in the last 30 days; deploy with force=true/,
    );
    expect(error.breaks).toEqual([
      {
        code: 'argument-newly-required',
        tool: 'forecast',
        path: '/arguments/properties/units',
        message: expect.stringContaining('units'),
        last_used_at: usedAt.tools.forecast,
        used: true,
      },
    ]);
    expect(error.reported).toEqual([]);
    expect((await storedImage(d.url, 'relay')).equals(stored)).toBe(true);
    expect((await detail(d.url, 'relay')).digest).toBe(digestOf(stored));
    // The harness that stayed still answers.
    expect(await call(c, 'relay.forecast', { days: 1 })).toEqual({ days: 1 });

    const forced = await put(`${d.url}/harnesses/relay?force=true`, next);
    expect(forced.status).toBe(200);
    const body = (await forced.json()) as { reported: GatedBreak[] };
    expect(body.reported).toEqual([expect.objectContaining({ code: 'argument-newly-required', tool: 'forecast', used: true })]);
    expect((await detail(d.url, 'relay')).digest).toBe(digestOf(next));
    expect(d.log().some((e) => e.msg === 'forced a deploy that breaks recent callers' && e.harness === 'relay')).toBe(true);
  });

  it("refuses a used event's field becoming optional", async () => {
    const next = await relayWith((m) => {
      tool(m, 'forecast').arguments = {
        type: 'object',
        properties: { days: { type: 'integer', format: 'uint32', minimum: 0 } },
        required: ['days'],
      };
      m.events[0]!.fields = { type: 'object', properties: { celsius: { type: 'number' } } };
    });
    const res = await put(`${d.url}/harnesses/relay`, next);
    expect(res.status).toBe(409);
    const { error } = (await res.json()) as { error: { breaks: GatedBreak[] } };
    expect(error.breaks).toEqual([
      expect.objectContaining({
        code: 'field-no-longer-always-present',
        event: 'reading',
        path: '/fields/properties/celsius',
        last_used_at: usedAt.events.reading,
        used: true,
      }),
    ]);
  });

  it('protects a tool reached only through a nested berm.call', async () => {
    expect((await put(`${d.url}/harnesses/inner`, (await basicImage()).bytes)).status).toBe(201);
    expect((await put(`${d.url}/harnesses/outer`, (await relayImage(['inner'])).bytes)).status).toBe(201);
    expect(await call(c, 'outer.call', { program: 'inner', tool: 'echo', args: { v: 1 } })).toEqual({ ok: { v: 1 } });
    const inner = await detail(d.url, 'inner');
    expect(inner.usage.tools.echo).not.toBeNull();
    expect((await detail(d.url, 'outer')).usage.tools.call).not.toBeNull();

    const manifest = basicManifest();
    manifest.tools = manifest.tools.filter((t) => t.name !== 'echo');
    const res = await put(`${d.url}/harnesses/inner`, await buildImage(basicWat(), manifest));
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { breaks: GatedBreak[] } }).error.breaks).toEqual([
      expect.objectContaining({ code: 'tool-removed', tool: 'echo', last_used_at: inner.usage.tools.echo, used: true }),
    ]);
  });

  it('keeps usage across a restart, and the gate with it', async () => {
    const before = await detail(d.url, 'relay');
    expect(await d.stop()).toBe(0);
    await c.close();
    d = await startDaemon({ stateDir: d.stateDir });
    c = await connect(d.url);
    const after = await detail(d.url, 'relay');
    expect(after.usage).toEqual(before.usage);
    expect(after.last_used_at).toBe(before.last_used_at);
    const meta = JSON.parse(await readFile(path.join(d.stateDir, 'harnesses', 'relay.json'), 'utf8'));
    expect(meta.used.events.reading).toBe(usedAt.events.reading);

    const next = await relayWith((m) => (m.tools = m.tools.filter((t) => t.name !== 'emit')));
    const res = await put(`${d.url}/harnesses/relay`, next);
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { breaks: GatedBreak[] } }).error.breaks.map((b) => [b.code, b.tool ?? b.event])).toEqual([
      ['tool-removed', 'emit'],
    ]);
  });
});

describe('the window, from uses in the past written into the state directory', { timeout: 120_000 }, () => {
  let stateDir: string;
  let v1: Uint8Array;
  let v2: Uint8Array;

  beforeAll(async () => {
    stateDir = await tempDir('bermd-gate-seeded-');
    v1 = await harnessImage(manifestWithTools(['echo', 'size']));
    v2 = await harnessImage(manifestWithTools(['size'], { version: '0.2.0' }));
  });
  afterAll(async () => {
    await removeDir(stateDir);
  });

  it('only reports a break of a tool last used 31 days ago, and refuses one used 29 days ago', async () => {
    const now = Date.now();
    await seedHarness(stateDir, 'stale', v1, { tools: { echo: now - 31 * DAY } });
    await seedHarness(stateDir, 'recent', v1, { tools: { echo: now - 29 * DAY } });
    const d = await startDaemon({ stateDir });
    try {
      expect((await detail(d.url, 'stale')).usage.tools.echo).toBe(new Date(now - 31 * DAY).toISOString());

      let res = await put(`${d.url}/harnesses/stale`, v2);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { reported: GatedBreak[] }).reported).toEqual([
        {
          code: 'tool-removed',
          tool: 'echo',
          path: '',
          message: 'tool `echo` was removed',
          last_used_at: new Date(now - 31 * DAY).toISOString(),
          used: false,
        },
      ]);

      res = await put(`${d.url}/harnesses/recent`, v2);
      expect(res.status).toBe(409);
      expect(((await res.json()) as { error: { breaks: GatedBreak[] } }).error.breaks).toEqual([
        expect.objectContaining({ tool: 'echo', last_used_at: new Date(now - 29 * DAY).toISOString(), used: true }),
      ]);
      expect((await detail(d.url, 'recent')).digest).toBe(digestOf(v1));
    } finally {
      await d.stop();
    }
  });

  it('follows --breaks-window: a use 2 hours ago protects nothing under a 1 hour window', async () => {
    const dir = await tempDir('bermd-gate-window-');
    await seedHarness(dir, 'h', v1, { tools: { echo: Date.now() - 2 * 3600 * 1000 } });
    const d = await startDaemon({ stateDir: dir, args: ['--breaks-window', '1h'] });
    try {
      const res = await put(`${d.url}/harnesses/h`, v2);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { reported: GatedBreak[] }).reported).toEqual([expect.objectContaining({ tool: 'echo', used: false })]);
    } finally {
      await d.stop();
      await removeDir(dir);
    }
  });

  it('exits 2 on a --breaks-window it cannot read', async () => {
    const child = spawn(process.execPath, [BERMD_BIN, '--listen', '127.0.0.1:0', '--state', stateDir, '--breaks-window', 'a month'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    expect(await exited(child)).toBe(2);
    expect(stderr).toContain('--breaks-window a month: expected a duration such as 30d');
  });
});
