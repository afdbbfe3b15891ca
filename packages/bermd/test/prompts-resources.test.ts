// A harness's prompts, resources, resource templates and completions as bermd serves them on /mcp, to
// the official SDK clients of both generations: listed and got, read (text and blob, a template's
// instance), subscribed to and told of a change a tool makes (berm.resource_updated), completed; the
// refusals (unknown prompt or resource, a missing argument, a principal without the harness's scope);
// and the deploy refusals of what the manifest declares without its export, or cannot serve.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { tokenSha256 } from '../dist/auth/index.js';
import { harnessImage, type HarnessOptions, sampleManifest } from '../../../test/helpers/harness.js';
import type { ManifestData } from '@berm/manifest';
import { removeDir, startDaemon, tempDir, type RunningDaemon } from './daemon.js';
import { Arrivals, connect, connectModern, deploy, envelope, modernHeaders, put } from './mcp-client.js';
import { createDatabase, describePostgres, dropDatabase, sql } from './postgres.js';
import { NO_RECONCILIATION, startReplicas, stopAll, until } from './replicas.js';

/** A harness `test` with two prompts, a text-and-blob resource, a watched one, a template and completion. */
function surfaceManifest(): ManifestData {
  return sampleManifest({
    tools: [{ name: 'touch', description: 'Marks watched-resource changed.', arguments: { type: 'object' } }, ...sampleManifest().tools],
    prompts: [
      { name: 'simple', description: 'A prompt without arguments.', arguments: [] },
      {
        name: 'with_args',
        description: 'A prompt with arguments.',
        arguments: [
          { name: 'arg1', description: 'First.', required: true, complete: true },
          { name: 'arg2', description: 'Second.' },
        ],
      },
      { name: 'broken', description: 'A prompt whose guest traps.', arguments: [] },
    ],
    resources: [
      { path: 'static-text', name: 'Static', description: 'Text and bytes.', mimeType: 'text/plain' },
      { path: 'watched-resource', name: 'Watched', description: 'Changes when touched.' },
    ],
    resource_templates: [
      { path: 'template/{id}/data', name: 'By id', description: 'One item.', mimeType: 'application/json', complete: ['id'] },
    ],
    deps: { programs: [], syscalls: { 'berm.resource_updated': [] }, secrets: [] },
  });
}

const BLOB = 'AAEC/w==';

/** The guest: each export writes the request it was given into its answer's `_meta`, so a test sees what reached it. */
const SURFACE_OPTIONS: HarnessOptions = {
  imports: [{ name: 'berm.resource_updated' }],
  tools: { touch: { kind: 'relay', import: 0, request: { path: 'watched-resource' } } },
  exports: {
    berm_prompt_broken: { kind: 'trap' },
    berm_prompt_simple: { kind: 'const', envelope: { ok: { messages: [{ role: 'user', content: { type: 'text', text: 'Hello.' } }] } } },
    berm_prompt_with_args: {
      kind: 'wrap',
      before: '{"ok":{"description":"rendered","messages":[{"role":"user","content":{"type":"text","text":"with arguments","_meta":',
      after: '}}]}}',
    },
    berm_resource_read: {
      kind: 'wrap',
      before: '{"ok":{"contents":[{"text":"read","_meta":',
      after: `},{"mimeType":"application/octet-stream","blob":"${BLOB}"}]}}`,
    },
    berm_complete: { kind: 'wrap', before: '{"ok":{"values":["alpha","beta"],"total":2,"hasMore":false,"_meta":', after: '}}' },
  },
};

const TOKENS = { all: 'berm_all_token_for_the_surface_test_0000000000', other: 'berm_other_token_for_the_surface_test_000000000' };

describe('bermd: prompts, resources and completion of a harness', () => {
  let d: RunningDaemon;
  let dir: string;
  const bearer = (who: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[who]}` });

  beforeAll(async () => {
    dir = await tempDir();
    const access = path.join(dir, 'access.json');
    const entries = [
      { name: 'all', token_sha256: tokenSha256(TOKENS.all), scopes: ['berm:read', 'berm:deploy', 'berm:call'] },
      { name: 'other', token_sha256: tokenSha256(TOKENS.other), scopes: ['berm:call:other'] },
    ];
    await writeFile(access, JSON.stringify(entries), { mode: 0o600 });
    d = await startDaemon({ args: ['--access', access, '--tool-separator', '_', '--resource-uris', 'harness-scheme'] });
    await deploy(d.url, 'test', await harnessImage(surfaceManifest(), SURFACE_OPTIONS), bearer('all'));
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
    if (dir) await removeDir(dir);
  });

  it('declares prompts, resources with subscribe, and completions to a 2025 client', async () => {
    const legacy = await connect(d.url, bearer('all'));
    try {
      const capabilities = legacy.client.getServerCapabilities();
      expect(capabilities?.prompts).toEqual({ listChanged: true });
      expect(capabilities?.resources).toEqual({ listChanged: true, subscribe: true });
      expect(capabilities?.completions).toEqual({});
    } finally {
      await legacy.close();
    }
  });

  for (const generation of ['2025', '2026-07-28'] as const) {
    const open = async (who: keyof typeof TOKENS) =>
      generation === '2025' ? (await connect(d.url, bearer(who))).client : (await connectModern(d.url, bearer(who))).client;

    describe(`to a ${generation} client`, () => {
      it('lists the prompts under their served names, with their arguments', async () => {
        const client = await open('all');
        const { prompts } = await client.listPrompts();
        expect(prompts.map((p) => p.name)).toEqual(['test_simple', 'test_with_args', 'test_broken']);
        expect(prompts[1]!.description).toBe('A prompt with arguments.');
        expect(prompts[1]!.arguments).toEqual([
          { name: 'arg1', description: 'First.', required: true },
          { name: 'arg2', description: 'Second.', required: false },
        ]);
        await client.close();
      });

      it('gets a prompt, rendered by the guest from the arguments given', async () => {
        const client = await open('all');
        const simple = await client.getPrompt({ name: 'test_simple' });
        expect(simple.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Hello.' } }]);
        const got = await client.getPrompt({ name: 'test_with_args', arguments: { arg1: 'testValue1', arg2: 'testValue2' } });
        expect(got.description).toBe('rendered');
        expect(got.messages[0]!.content._meta).toEqual({ arguments: { arg1: 'testValue1', arg2: 'testValue2' } });
        await client.close();
      });

      it('refuses an unknown prompt and a missing required argument as invalid params, running nothing', async () => {
        const client = await open('all');
        await expect(client.getPrompt({ name: 'test_nothing' })).rejects.toMatchObject({ code: -32602 });
        const missing = client.getPrompt({ name: 'test_with_args', arguments: { arg2: 'x' } });
        await expect(missing).rejects.toMatchObject({ code: -32602 });
        await expect(missing).rejects.toThrow(/arg1/);
        await client.close();
      });

      it("answers a guest's failure as an internal error carrying bermd's code", async () => {
        const client = await open('all');
        const broken = client.getPrompt({ name: 'test_broken' });
        await expect(broken).rejects.toMatchObject({ code: -32603, data: { code: 'trap' } });
        await expect(broken).rejects.toThrow(/prompt test_broken failed/);
        await client.close();
      });

      it('lists the resources beside the usage, at the harness-scheme URIs, and the template', async () => {
        const client = await open('all');
        const { resources } = await client.listResources();
        expect(resources.map((r) => r.uri)).toEqual(['berm://test/usage', 'test://static-text', 'test://watched-resource']);
        expect(resources[1]).toMatchObject({ name: 'Static', mimeType: 'text/plain' });
        const { resourceTemplates } = await client.listResourceTemplates();
        expect(resourceTemplates).toEqual([
          { uriTemplate: 'test://template/{id}/data', name: 'By id', description: 'One item.', mimeType: 'application/json' },
        ]);
        await client.close();
      });

      it('reads a resource, text and blob, at either URI form, and a template instance with its variables', async () => {
        const client = await open('all');
        for (const uri of ['test://static-text', 'berm://test/static-text']) {
          const { contents } = await client.readResource({ uri });
          expect(contents).toEqual([
            { uri, mimeType: 'text/plain', text: 'read', _meta: { path: 'static-text' } },
            { uri, mimeType: 'application/octet-stream', blob: BLOB },
          ]);
        }
        const { contents } = await client.readResource({ uri: 'test://template/123/data' });
        expect(contents[0]).toMatchObject({ uri: 'test://template/123/data', mimeType: 'application/json', text: 'read' });
        expect(contents[0]!._meta).toEqual({ path: 'template/123/data', template: 'template/{id}/data', variables: { id: '123' } });
        await client.close();
      });

      it('answers an unknown resource with invalid params naming the URI', async () => {
        const client = await open('all');
        for (const uri of ['test://nothing', 'berm://test/template/1/2/data', 'berm://ghost/static-text']) {
          const read = client.readResource({ uri });
          await expect(read).rejects.toMatchObject({ code: -32602, data: { uri } });
        }
        await client.close();
      });

      it('completes a declared argument and template variable through the guest, and nothing undeclared', async () => {
        const client = await open('all');
        const prompt = await client.complete({
          ref: { type: 'ref/prompt', name: 'test_with_args' },
          argument: { name: 'arg1', value: 'al' },
          context: { arguments: { arg2: 'x' } },
        });
        expect(prompt.completion.values).toEqual(['alpha', 'beta']);
        expect(prompt.completion.total).toBe(2);
        const template = await client.complete({
          ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
          argument: { name: 'id', value: '1' },
        });
        expect(template.completion.values).toEqual(['alpha', 'beta']);
        const undeclared = await client.complete({
          ref: { type: 'ref/prompt', name: 'test_with_args' },
          argument: { name: 'arg2', value: '' },
        });
        expect(undeclared.completion.values).toEqual([]);
        await client.close();
      });

      it('shows a principal without the harness scope none of it', async () => {
        const client = await open('other');
        expect((await client.listPrompts()).prompts).toEqual([]);
        expect((await client.listResources()).resources).toEqual([]);
        expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
        await expect(client.getPrompt({ name: 'test_simple' })).rejects.toMatchObject({ code: -32602 });
        await expect(client.readResource({ uri: 'test://static-text' })).rejects.toMatchObject({
          code: -32602,
          data: { uri: 'test://static-text' },
        });
        const completion = await client.complete({
          ref: { type: 'ref/prompt', name: 'test_with_args' },
          argument: { name: 'arg1', value: '' },
        });
        expect(completion.completion.values).toEqual([]);
        await client.close();
      });
    });
  }

  it('tells a subscribed 2025 session when a tool calls berm.resource_updated, and stops once it unsubscribes', async () => {
    const watcher = await connect(d.url, bearer('all'));
    const caller = await connect(d.url, bearer('all'));
    try {
      const updated = new Arrivals<string>();
      watcher.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
      expect(await watcher.client.subscribeResource({ uri: 'test://watched-resource' })).toEqual({});
      // The notification goes on the session's own stream, opened by the client after initialize.
      const touched = await caller.client.callTool({ name: 'test_touch', arguments: {} });
      expect(touched.isError).toBeFalsy();
      await updated.reach(1);
      expect(updated.received).toEqual(['test://watched-resource']);

      expect(await watcher.client.unsubscribeResource({ uri: 'test://watched-resource' })).toEqual({});
      // A second subscriber shows the next change was sent, and that the first was not sent it.
      await caller.client.subscribeResource({ uri: 'berm://test/watched-resource' });
      const seen = new Arrivals<string>();
      caller.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => seen.push(n.params.uri));
      await caller.client.callTool({ name: 'test_touch', arguments: {} });
      await seen.reach(1);
      expect(seen.received).toEqual(['berm://test/watched-resource']);
      expect(updated.received).toHaveLength(1);
    } finally {
      await watcher.close();
      await caller.close();
    }
  });

  it('tells a 2026-07-28 listen stream that named the resource when a tool calls berm.resource_updated', async () => {
    const modern = await connectModern(d.url, bearer('all'));
    try {
      const updated = new Arrivals<string>();
      modern.client.setNotificationHandler('notifications/resources/updated', (n) => updated.push(n.params.uri));
      const subscription = await modern.client.listen({ resourceSubscriptions: ['test://watched-resource'] });
      try {
        const touched = await modern.client.callTool({ name: 'test_touch', arguments: {} });
        expect(touched.isError).toBeFalsy();
        await updated.reach(1);
        expect(updated.received).toEqual(['test://watched-resource']);
      } finally {
        await subscription.close();
      }
    } finally {
      await modern.close();
    }
  });

  it('refuses to subscribe to a resource that is not declared, with the URI', async () => {
    const legacy = await connect(d.url, bearer('all'));
    try {
      await expect(legacy.client.subscribeResource({ uri: 'test://nothing' })).rejects.toMatchObject({
        code: -32602,
        data: { uri: 'test://nothing' },
      });
    } finally {
      await legacy.close();
    }
  });
});

describe('bermd: deploying prompts and resources', () => {
  let d: RunningDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  async function refusal(manifest: ManifestData, options: HarnessOptions): Promise<{ status: number; error: Record<string, unknown> }> {
    const res = await put(`${d.url}/harnesses/refused`, await harnessImage(manifest, options));
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect((await fetch(`${d.url}/harnesses/refused`)).status).toBe(404);
    return { status: res.status, error: body.error };
  }

  it('refuses a declared prompt, resource read or completion without its export, naming it', async () => {
    const full = surfaceManifest();
    for (const missing of ['berm_prompt_simple', 'berm_resource_read', 'berm_complete']) {
      const { [missing]: _, ...exports } = SURFACE_OPTIONS.exports!;
      const { status, error } = await refusal(full, { ...SURFACE_OPTIONS, exports });
      expect(status).toBe(422);
      expect(error.code).toBe('missing-export');
      expect(error.message).toContain(missing);
    }
  });

  it('refuses a template that is not a level-1 template, and a resource at usage, as bad images with the reader code', async () => {
    const template = await refusal(sampleManifest({ resource_templates: [{ path: 'items/{+id}', name: 'x', description: '' }] }), {
      exports: { berm_resource_read: { kind: 'const', envelope: { ok: { contents: [] } } } },
    });
    expect(template.status).toBe(400);
    expect(template.error).toMatchObject({ code: 'bad-image', reason: 'resource-template-invalid', path: '/resource_templates/0/path' });
    const usage = await refusal(sampleManifest({ resources: [{ path: 'usage', name: 'u', description: '' }] }), {
      exports: { berm_resource_read: { kind: 'const', envelope: { ok: { contents: [] } } } },
    });
    expect(usage.status).toBe(400);
    expect(usage.error).toMatchObject({ code: 'bad-image', reason: 'resource-path-reserved', path: '/resources/0/path' });
  });
});

describePostgres('bermd replicas: a resource changed on one is told on another', { timeout: 120_000 }, () => {
  let db: string;
  let daemons: RunningDaemon[] = [];
  beforeAll(async () => {
    db = await createDatabase();
    // At debug level each replica logs a session's stream as it opens.
    daemons = await startReplicas(2, db, { args: [...NO_RECONCILIATION, '--tool-separator', '_', '--log-level', 'debug'] });
  });
  afterAll(async () => {
    await stopAll(daemons);
    if (db) await dropDatabase(db);
  });

  it("a session subscribed on B hears of berm.resource_updated called through A, and of no other resource's change", async () => {
    const [a, b] = daemons as [RunningDaemon, RunningDaemon];
    await deploy(a.url, 'test', await harnessImage(surfaceManifest(), SURFACE_OPTIONS));
    const watcher = await connect(b.url);
    const caller = await connect(a.url);
    try {
      const updated = new Arrivals<string>();
      watcher.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
      // B serves test once it has followed A's deploy: until then the URI is unknown there.
      await until('B to serve test', () =>
        watcher.client.subscribeResource({ uri: 'berm://test/watched-resource' }).then(
          (answer) => answer,
          () => undefined,
        ),
      );
      // Another resource's change, on the same channel and so before the touch: this subscriber hears nothing of it.
      await sql(db, "SELECT pg_notify('berm_harness', $1)", [JSON.stringify({ name: 'test', what: 'resource', path: 'static-text' })]);
      await caller.client.callTool({ name: 'test_touch', arguments: {} });
      await updated.reach(1);
      expect(updated.received).toEqual(['berm://test/watched-resource']);
    } finally {
      await watcher.close();
      await caller.close();
    }
  });

  it('a session subscribed through A and served by B next is told there: its subscriptions are kept with it', async () => {
    const [a, b] = daemons as [RunningDaemon, RunningDaemon];
    await deploy(a.url, 'test', await harnessImage(surfaceManifest(), SURFACE_OPTIONS));
    const watcher = await connect(a.url);
    const id = watcher.transport.sessionId!;
    const stream = new AbortController();
    try {
      expect(await watcher.client.subscribeResource({ uri: 'berm://test/watched-resource' })).toEqual({});
      // The session's stream opened on B, which never saw the subscribe: it rebuilds the session from the store.
      const opened = b.waitForLog((e) => e.msg === 'mcp notification stream opened' && e.session === id);
      const res = await fetch(`${b.url}/mcp`, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' },
        signal: stream.signal,
      });
      expect(res.status).toBe(200);
      await opened;
      const reader = res.body!.getReader();
      const told = (async () => {
        let text = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return text;
          text += new TextDecoder().decode(value);
          if (text.includes('notifications/resources/updated')) return text;
        }
      })();
      // B serves test once it has followed A's deploy.
      await until('B to run test_touch', async () => {
        const answer = await fetch(`${b.url}/mcp`, {
          method: 'POST',
          headers: {
            ...modernHeaders('tools/call', 'test_touch'),
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'test_touch', arguments: {}, _meta: envelope() },
          }),
        });
        const body = await answer.text();
        return answer.status === 200 && body.includes('"result"') && !body.includes('"isError":true') ? true : undefined;
      });
      const text = await told;
      expect(text).toContain('"method":"notifications/resources/updated"');
      expect(text).toContain('"uri":"berm://test/watched-resource"');
    } finally {
      stream.abort();
      await watcher.close();
    }
  });
});
