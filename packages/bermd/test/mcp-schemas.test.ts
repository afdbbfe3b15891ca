// What tools/list sends, as clients read it: every schema compiles under a standard JSON Schema 2020-12
// validator (ajv in strict mode, with the standard formats) without a warning, in both protocol
// generations, while the manifest bermd keeps still has the formats as written; and the hints say
// what the manifest and the operator's grants say. A real bermd, the SDK clients of both generations.
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ManifestData, ToolSpec } from '@berm/manifest';
import { harnessImage, sampleManifest } from '../../../test/helpers/harness.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { connect, deploy, MODERN, put, valueOf, type McpConnection } from './mcp-client.js';

type AjvClass = typeof Ajv2020Module.default;
// ajv and ajv-formats are CommonJS with a `default` member; under NodeNext the default import is the whole module.
const Ajv2020: AjvClass = (Ajv2020Module as unknown as { default?: AjvClass }).default ?? (Ajv2020Module as unknown as AjvClass);
type AddFormats = typeof addFormatsModule.default;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

/** Tools whose schemas use what generated schemas use: Rust's integer and float formats, a string format no standard knows, `$defs`. */
const typedTools: ToolSpec[] = [
  {
    name: 'sizes',
    description: 'Takes numbers of every width.',
    arguments: {
      type: 'object',
      properties: {
        small: { type: 'integer', format: 'uint8' },
        signed: { type: 'integer', format: 'int32' },
        wide: { type: 'integer', format: 'int64' },
        unsigned: { type: 'integer', format: 'uint64', minimum: 0 },
        ratio: { type: 'number', format: 'float' },
        exact: { type: 'number', format: 'double' },
        phone: { type: 'string', format: 'phone' },
        when: { type: 'string', format: 'date-time' },
        counts: { type: 'array', items: { $ref: '#/$defs/count' } },
        maybe: { type: ['integer', 'null'], format: 'uint16' },
      },
      required: ['small'],
      $defs: { count: { type: 'integer', format: 'uint32' } },
    },
    returns: { type: 'object', properties: { total: { type: 'integer', format: 'uint64' } } },
    query: true,
  },
  {
    name: 'routed',
    description: 'Asks clients to mirror arguments into headers, once as the transport allows and once as it does not.',
    arguments: {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        zones: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Bad Name' } },
      },
    },
    returns: { type: 'object' },
  },
  {
    name: 'count',
    description: 'Answers a bare number.',
    arguments: { type: 'object' },
    returns: { type: 'integer', format: 'uint32' },
  },
];

function manifestWith(tools: ToolSpec[], deps: Partial<ManifestData['deps']> = {}): ManifestData {
  return sampleManifest({ tools, deps: { programs: [], syscalls: {}, secrets: [], ...deps } });
}

const plainTool = (name: string): ToolSpec => ({ name, description: `The ${name} tool.`, arguments: { type: 'object' } });

interface Listed {
  name: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown>;
}

describe('/mcp tools/list as clients read it', () => {
  let d: RunningDaemon;
  let legacy: McpConnection;
  let modern: ModernClient;

  beforeAll(async () => {
    d = await startDaemon({ args: ['--serve', 'berm.http.fetch'] });
    await deploy(
      d.url,
      'typed',
      await harnessImage(manifestWith(typedTools), { tools: { count: { kind: 'const', envelope: { ok: 7 } } } }),
    );
    const fetching = { syscalls: { 'berm.http.fetch': ['api.example.com'] } };
    const fetchImport = { imports: [{ name: 'berm.http.fetch' }] };
    await deploy(d.url, 'net', await harnessImage(manifestWith([plainTool('get')], fetching), fetchImport));
    await deploy(
      d.url,
      'relay',
      await harnessImage(manifestWith([plainTool('via')], { programs: ['net'] }), { imports: [{ name: 'berm.call' }] }),
    );
    // Declares the syscall, is granted nothing: its calls cannot leave the machine.
    const closed = await put(
      `${d.url}/harnesses/closed?grant=none`,
      await harnessImage(manifestWith([plainTool('shut')], fetching), fetchImport),
    );
    expect(closed.status).toBe(201);
    legacy = await connect(d.url);
    modern = new ModernClient({ name: 'schemas', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await modern.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url)));
  });
  afterAll(async () => {
    await legacy?.close();
    await modern?.close();
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  async function lists(): Promise<Array<[string, Listed[]]>> {
    return [
      ['2025-11-25', (await legacy.client.listTools()).tools as Listed[]],
      [MODERN, (await modern.listTools(undefined, { cacheMode: 'bypass' })).tools as Listed[]],
    ];
  }

  it('sends schemas that ajv compiles in strict mode with the standard formats, without a warning', async () => {
    const warnings: unknown[] = [];
    const logger = { log: () => {}, warn: (...args: unknown[]) => warnings.push(args), error: (...args: unknown[]) => warnings.push(args) };
    for (const [generation, tools] of await lists()) {
      expect(tools.length, generation).toBeGreaterThanOrEqual(5);
      for (const tool of tools) {
        for (const schema of [tool.inputSchema, tool.outputSchema]) {
          if (schema === undefined) continue;
          const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, logger });
          addFormats(ajv);
          expect(() => ajv.compile(schema as object), `${generation} ${tool.name}`).not.toThrow();
        }
      }
    }
    expect(warnings).toEqual([]);
  });

  it('writes the formats as the ranges they mean, and keeps them as written in the manifest', async () => {
    for (const [generation, tools] of await lists()) {
      const sizes = tools.find((t) => t.name === 'typed.sizes')!;
      const properties = (sizes.inputSchema as { properties: Record<string, unknown> }).properties;
      expect(properties, generation).toMatchObject({
        small: { type: 'integer', minimum: 0, maximum: 255 },
        signed: { type: 'integer', minimum: -2147483648, maximum: 2147483647 },
        wide: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
        unsigned: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        ratio: { type: 'number', minimum: -3.4028234663852886e38, maximum: 3.4028234663852886e38 },
        exact: { type: 'number' },
        phone: { type: 'string' },
        when: { type: 'string', format: 'date-time' },
        maybe: { type: ['integer', 'null'], minimum: 0, maximum: 65535 },
      });
      expect(JSON.stringify(sizes.inputSchema)).not.toMatch(/"format":"(u?int|float|double|phone)/);
      expect((sizes.inputSchema as { $defs: unknown }).$defs).toEqual({ count: { type: 'integer', minimum: 0, maximum: 4294967295 } });
    }
    const detail = (await (await fetch(`${d.url}/harnesses/typed`)).json()) as { manifest: ManifestData };
    expect(detail.manifest.tools[0]!.arguments).toEqual(typedTools[0]!.arguments);
  });

  it('leaves out x-mcp-header, so no client drops the tool or is asked for Mcp-Param headers bermd does not check', async () => {
    for (const [generation, tools] of await lists()) {
      const routed = tools.find((t) => t.name === 'typed.routed');
      expect(routed?.inputSchema, generation).toEqual({
        type: 'object',
        properties: { region: { type: 'string' }, zones: { type: 'array', items: { type: 'string' } } },
      });
    }
    const result = await modern.callTool({ name: 'typed.routed', arguments: { region: 'eu', zones: ['a'] } });
    expect(result.structuredContent).toEqual({ region: 'eu', zones: ['a'] });
    const detail = (await (await fetch(`${d.url}/harnesses/typed`)).json()) as { manifest: ManifestData };
    expect(detail.manifest.tools.find((t) => t.name === 'routed')!.arguments).toEqual(typedTools[1]!.arguments);
  });

  it('lists a bare result as an output schema to 2026-07-28 clients only, and answers it typed', async () => {
    const [[, old], [, current]] = await lists();
    expect(old!.find((t) => t.name === 'typed.count')!.outputSchema).toBeUndefined();
    expect(current!.find((t) => t.name === 'typed.count')!.outputSchema).toEqual({ type: 'integer', minimum: 0, maximum: 4294967295 });
    const result = await modern.callTool({ name: 'typed.count', arguments: {} });
    expect(result.structuredContent).toBe(7);
    const plain = await legacy.client.callTool({ name: 'typed.count', arguments: {} });
    expect(valueOf(plain as Parameters<typeof valueOf>[0])).toBe(7);
    expect(plain.structuredContent).toBeUndefined();
  });

  it("leaves the SDK clients nothing to warn about when they check a call's result", async () => {
    const warn = vi.spyOn(console, 'warn');
    try {
      await legacy.client.listTools();
      const a = await legacy.client.callTool({ name: 'typed.sizes', arguments: { small: 3 } });
      const b = await modern.callTool({ name: 'typed.sizes', arguments: { small: 3, wide: 2 ** 40 } });
      expect(a.structuredContent).toEqual({ small: 3 });
      expect(b.structuredContent).toEqual({ small: 3, wide: 2 ** 40 });
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('hints what the manifest and the grants say: queries read only, and whether a call can leave the machine', async () => {
    for (const [generation, tools] of await lists()) {
      const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
      expect(hints['typed.sizes'], generation).toEqual({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
      expect(hints['typed.count'], generation).toEqual({ readOnlyHint: false, openWorldHint: false });
      // Granted berm.http.fetch; or calling a program that is.
      expect(hints['net.get'], generation).toEqual({ readOnlyHint: false, openWorldHint: true });
      expect(hints['relay.via'], generation).toEqual({ readOnlyHint: false, openWorldHint: true });
      // Declared, not granted.
      expect(hints['closed.shut'], generation).toEqual({ readOnlyHint: false, openWorldHint: false });
    }
  });
});
