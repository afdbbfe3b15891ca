// Every call /mcp makes runs with its request's principal: the runtime's `CallOptions.caller`, which
// nested `berm.call` and secrets read. `/mcp` is served by a real HTTP server on loopback (the app, its
// token check over static principals, and the endpoint bermd builds), in front of a core whose `call`
// records the options it is given; the SDK clients of both generations call through it, with the fast
// path and without. How the runtime uses the caller is its own tests' business.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../dist/app/index.js';
import { Authentication, StaticPrincipals, tokenSha256 } from '../dist/auth/index.js';
import { createMcpEndpoint, type McpCore, type McpEndpoint, McpSessions, StatelessMcp, ToolCatalog } from '../dist/mcp/index.js';
import type { CallOptions, CallOutcome } from '../dist/runtime/index.js';
import { sampleManifest } from '../../../test/helpers/harness.js';
import { type AnyToolResult, connect, connectModern, valueOf } from './mcp-client.js';

const TOKENS = { alice: 'alice-token-for-this-test-only', carol: 'carol-token-for-this-test-only' };

describe.each([
  { way: 'on the fast path', fastPath: true },
  { way: 'with --mcp-fast-path false', fastPath: false },
])('a tools/call, $way', ({ fastPath }) => {
  const calls: Array<{ harness: string; options: CallOptions }> = [];
  const catalog = new ToolCatalog('.');
  for (const harness of ['alpha', 'beta']) catalog.set(catalog.prepare(harness, sampleManifest()));
  const core: McpCore = {
    catalog,
    call: async (harness, _tool, args, options): Promise<CallOutcome> => {
      calls.push({ harness, options });
      return { ok: args, reached: { tools: [], events: [] } };
    },
    recordUse: () => {},
    logger: pino({ level: 'silent' }),
    version: '0.0.0',
    broadcastEvent: () => {},
  };
  let app: FastifyInstance;
  let endpoint: McpEndpoint;
  let url: string;

  beforeAll(async () => {
    const principals = new StaticPrincipals([
      { name: 'alice', token_sha256: tokenSha256(TOKENS.alice), scopes: ['berm:call:alpha'] },
      { name: 'carol', token_sha256: tokenSha256(TOKENS.carol), scopes: ['berm:call'] },
    ]);
    app = buildApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024 * 1024, auth: new Authentication({ statics: principals }) });
    endpoint = createMcpEndpoint({ sessions: new McpSessions(core), stateless: new StatelessMcp(core), fastPath });
    await app.register(endpoint.plugin);
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await endpoint?.close();
    await app?.close();
  });

  it('runs with the principal of the request that made it, in both generations', async () => {
    for (const [who, harness] of [
      ['alice', 'alpha'],
      ['carol', 'beta'],
    ] as const) {
      const headers = { authorization: `Bearer ${TOKENS[who]}` };
      const legacy = await connect(url, headers);
      const modern = await connectModern(url, headers);
      try {
        for (const client of [legacy.client, modern.client]) {
          calls.length = 0;
          const result = (await client.callTool({ name: `${harness}.echo`, arguments: { query: who } })) as AnyToolResult;
          expect(valueOf(result)).toEqual({ query: who });
          expect(calls).toHaveLength(1);
          const { caller } = calls[0]!.options;
          expect(caller?.name).toBe(who);
          // The principal itself, whose scopes the runtime asks of nested calls.
          expect([caller?.mayCall('alpha'), caller?.mayCall('beta')]).toEqual([true, who === 'carol']);
        }
      } finally {
        await Promise.all([legacy.close(), modern.close()]);
      }
    }
  });
});
