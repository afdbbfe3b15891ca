// What a tool may do beside answering a value, end to end through a real bermd and the official SDK
// clients of both generations: answer MCP content blocks (checked against the kinds its tool declares,
// within the result limit), report progress (sent only to a request that gave a token, bounded, never
// decreasing), and ask the client that made the call (elicitation and sampling: answered, declined,
// refused without the capability, withdrawn at the call's time limit).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { askImage, FLOOD_REPORTS } from '../../../test/helpers/guest.js';
import { MAX_PROGRESS_REPORTS } from '../dist/runtime/index.js';
import { removeDir, startDaemon, type RunningDaemon } from './daemon.js';
import { deploy, MODERN, put } from './mcp-client.js';

type Result = { content: Array<Record<string, unknown>>; isError?: boolean; structuredContent?: unknown; _meta?: Record<string, unknown> };
type Progress = { progress: number; total?: number; message?: string };

/** What a test's client answers when asked, and what it was asked. */
interface Answers {
  elicit?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>;
  sample?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

interface TestClient {
  call(name: string, args: Record<string, unknown>, onprogress?: (p: Progress) => void): Promise<Result>;
  close(): Promise<void>;
}

/** A 2025-11-25 client (SDK 1.x) declaring the capabilities `answers` has handlers for. */
async function legacyClient(url: string, answers: Answers): Promise<TestClient> {
  const capabilities: Record<string, object> = {};
  if (answers.elicit !== undefined) capabilities.elicitation = {};
  if (answers.sample !== undefined) capabilities.sampling = {};
  const client = new Client({ name: 'content-test', version: '0' }, { capabilities });
  if (answers.elicit !== undefined) client.setRequestHandler(ElicitRequestSchema, (r) => answers.elicit!(r.params) as never);
  if (answers.sample !== undefined) client.setRequestHandler(CreateMessageRequestSchema, (r) => answers.sample!(r.params) as never);
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url));
  await client.connect(transport);
  return {
    call: async (name, args, onprogress) =>
      (await client.callTool(
        { name, arguments: args },
        undefined,
        onprogress === undefined ? {} : { onprogress, timeout: 20_000 },
      )) as Result,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** A 2026-07-28 client (SDK v2, pinned), which fulfils `input_required` through the same handlers. */
async function modernClient(url: string, answers: Answers): Promise<TestClient> {
  const capabilities: Record<string, object> = {};
  if (answers.elicit !== undefined) capabilities.elicitation = {};
  if (answers.sample !== undefined) capabilities.sampling = {};
  const client = new ModernClient(
    { name: 'content-test-2026', version: '0' },
    { capabilities, versionNegotiation: { mode: { pin: MODERN } } },
  );
  if (answers.elicit !== undefined) client.setRequestHandler('elicitation/create', (r) => answers.elicit!(r.params) as never);
  if (answers.sample !== undefined) client.setRequestHandler('sampling/createMessage', (r) => answers.sample!(r.params) as never);
  await client.connect(new ModernTransport(new URL('/mcp', url)));
  return {
    call: async (name, args, onprogress) =>
      (await client.callTool({ name, arguments: args }, onprogress === undefined ? {} : { onprogress })) as unknown as Result,
    close: () => client.close(),
  };
}

const GENERATIONS = [
  { generation: '2025-11-25', open: legacyClient },
  { generation: MODERN, open: modernClient },
];

const PNG = Buffer.from('\x89PNG\r\n\x1a\n fake but Base64', 'latin1').toString('base64');
const WAV = Buffer.from('RIFF....WAVEfmt ', 'latin1').toString('base64');
const image = { type: 'image', data: PNG, mimeType: 'image/png' };
const audio = { type: 'audio', data: WAV, mimeType: 'audio/wav' };
const resource = { type: 'resource', resource: { uri: 'berm://ask/report.txt', mimeType: 'text/plain', text: 'the report' } };
const link = { type: 'resource_link', uri: 'berm://ask/report.txt', name: 'report' };
const ELICIT = {
  message: 'Which colour?',
  requestedSchema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] },
};
const SAMPLE = { messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }], maxTokens: 20 };

function errorCode(result: Result): unknown {
  return (result._meta?.['berm/error'] as { code?: string } | undefined)?.code;
}

/** The envelope a relaying tool answered: `{"ok": <the host's envelope>}`, read from its text. */
function relayed(result: Result): Record<string, unknown> {
  expect(result.isError).toBeFalsy();
  return JSON.parse(result.content[0]!.text as string) as Record<string, unknown>;
}

describe.each([
  { way: 'with the fast path', args: [] as string[] },
  { way: 'with --mcp-fast-path false', args: ['--mcp-fast-path', 'false'] },
])('/mcp content, progress and asking the client, $way', ({ args }) => {
  let d: RunningDaemon;
  beforeAll(async () => {
    // The questions' tests wait on the 2 s limit `ask` is deployed with; the flood of progress runs as
    // `flood`, under the daemon's longer limit, since relaying its thousand notifications to a client on a
    // loaded machine is not what that limit is about.
    d = await startDaemon({ args: ['--call-timeout', '30s', '--max-result-size', '64K', ...args] });
    const asking = (await askImage()).bytes;
    await put(`${d.url}/harnesses/ask?timeout=2s`, asking).then((res) => expect(res.status).toBe(201));
    await deploy(d.url, 'flood', asking);
    await deploy(d.url, 'plain', (await askImage({ content: ['text', 'image'], noAsks: true })).bytes);
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  describe.each(GENERATIONS)('$generation', ({ open }) => {
    it('answers image, audio, an embedded resource, a link and mixed content as the guest wrote them', async () => {
      const client = await open(d.url, {});
      try {
        for (const content of [[image], [audio], [resource], [link], [{ type: 'text', text: 'see:' }, image, resource, audio]]) {
          const result = await client.call('ask.envelope', { ok: { n: 1 }, content });
          expect(result.isError).toBeFalsy();
          expect(result.content).toEqual(content);
        }
        // Without content, the value's text as before.
        const plain = await client.call('ask.envelope', { ok: { n: 1 } });
        expect(plain.content).toEqual([{ type: 'text', text: '{"n":1}' }]);
      } finally {
        await client.close();
      }
    });

    it('refuses content of a kind the tool does not declare, and a malformed block, with bad-content', async () => {
      const client = await open(d.url, {});
      try {
        const undeclared = await client.call('plain.envelope', { ok: null, content: [audio] });
        expect(undeclared.isError).toBe(true);
        expect(errorCode(undeclared)).toBe('bad-content');
        expect(undeclared.content[0]!.text).toMatch(/kind "audio", which the tool does not declare \(it declares text, image\)/);
        const malformed = await client.call('plain.envelope', {
          ok: null,
          content: [{ type: 'image', data: 'not base64!', mimeType: 'image/png' }],
        });
        expect(errorCode(malformed)).toBe('bad-content');
        expect(malformed.content[0]!.text).toMatch(/content block 0 \(image\) is malformed: its "data" is not Base64/);
        const notDeclaredAtAll = await client.call('plain.progress', {});
        expect(notDeclaredAtAll.isError).toBeFalsy();
      } finally {
        await client.close();
      }
    });

    it('counts content against the result limit', async () => {
      const client = await open(d.url, {});
      try {
        const big = { type: 'image', data: Buffer.alloc(60 * 1024, 7).toString('base64'), mimeType: 'image/png' };
        const result = await client.call('ask.envelope', { ok: null, content: [big] });
        expect(errorCode(result)).toBe('result-too-large');
      } finally {
        await client.close();
      }
    });

    it('sends progress three times to a request that gave a token, and none to one that did not', async () => {
      const client = await open(d.url, {});
      try {
        const seen: Progress[] = [];
        const result = await client.call('ask.progress', {}, (p) => seen.push(p));
        expect(result.content).toEqual([{ type: 'text', text: '"done"' }]);
        expect(seen.map(({ progress, total, message }) => ({ progress, total, message }))).toEqual([
          { progress: 1, total: 3, message: 'one' },
          { progress: 2, total: 3, message: 'two' },
          { progress: 3, total: 3, message: 'three' },
        ]);
        // No token: the call answers alike, and nothing reaches a handler that never asked.
        expect((await client.call('ask.progress', {})).content).toEqual([{ type: 'text', text: '"done"' }]);
      } finally {
        await client.close();
      }
    });

    it('bounds a flood of progress and refuses a progress that decreases', async () => {
      const client = await open(d.url, {});
      try {
        const seen: Progress[] = [];
        const flood = await client.call('flood.flood', {}, (p) => seen.push(p));
        expect(relayed(flood).ok).toBeUndefined();
        expect(String(relayed(flood).refused)).toContain(`sent its ${MAX_PROGRESS_REPORTS} progress reports`);
        expect(seen.length).toBeLessThanOrEqual(MAX_PROGRESS_REPORTS);
        expect(MAX_PROGRESS_REPORTS).toBeLessThan(FLOOD_REPORTS);
        const regress = relayed(await client.call('ask.regress', {}, () => {}));
        expect(String(regress.refused)).toContain("progress 1 is below the call's latest, 2");
      } finally {
        await client.close();
      }
    });

    it('hands the guest an accepted elicitation, and a declined one', async () => {
      const asked: Array<Record<string, unknown>> = [];
      const client = await open(d.url, {
        elicit: async (params) => {
          asked.push(params);
          return asked.length === 1 ? { action: 'accept', content: { colour: 'teal' } } : { action: 'decline' };
        },
      });
      try {
        expect(relayed(await client.call('ask.elicit', ELICIT))).toEqual({ ok: { action: 'accept', content: { colour: 'teal' } } });
        expect(asked[0]).toMatchObject(ELICIT);
        expect(relayed(await client.call('ask.elicit', ELICIT))).toEqual({ ok: { action: 'decline' } });
      } finally {
        await client.close();
      }
    });

    it('asks twice in one call, each answer in its place', async () => {
      let n = 0;
      const client = await open(d.url, { elicit: async () => ({ action: 'accept', content: { colour: `c${++n}` } }) });
      try {
        const result = await client.call('ask.elicit_twice', ELICIT);
        expect(result.isError).toBeFalsy();
        expect(JSON.parse(result.content[0]!.text as string)).toEqual([
          { ok: { action: 'accept', content: { colour: 'c1' } } },
          { ok: { action: 'accept', content: { colour: 'c2' } } },
        ]);
      } finally {
        await client.close();
      }
    });

    it('refuses to ask a client that declared no elicitation or sampling capability', async () => {
      const client = await open(d.url, {});
      try {
        expect(String(relayed(await client.call('ask.elicit', ELICIT)).refused)).toMatch(/did not declare the elicitation capability/);
        expect(String(relayed(await client.call('ask.sample', SAMPLE)).refused)).toMatch(/did not declare the sampling capability/);
      } finally {
        await client.close();
      }
    });

    it("hands the guest the client's sampled message", async () => {
      const answer = { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'test-model', stopReason: 'endTurn' };
      const client = await open(d.url, { sample: async () => answer });
      try {
        expect(relayed(await client.call('ask.sample', SAMPLE))).toEqual({ ok: answer });
      } finally {
        await client.close();
      }
    });
  });

  it('withdraws an elicitation its 2025 client never answers, and tells the guest within the time limit', async () => {
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => (asked = resolve));
    const client = await legacyClient(d.url, {
      elicit: () => {
        asked();
        return new Promise(() => {});
      },
    });
    try {
      const result = await client.call('ask.elicit', ELICIT);
      await wasAsked;
      expect(String(relayed(result).refused)).toMatch(/did not answer within the call's time limit of 2000 ms; the question was withdrawn/);
    } finally {
      await client.close();
    }
  });
});

describe('grants of the asking syscalls', () => {
  let d: RunningDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d?.stop();
    if (d) await removeDir(d.stateDir);
  });

  it('serves berm.elicit and berm.sample by default, and refuses them to a harness whose grants leave them out', async () => {
    const { bytes } = await askImage();
    expect((await put(`${d.url}/harnesses/asks`, bytes)).status).toBe(201);
    expect((await put(`${d.url}/harnesses/narrow?grant=syscall%3Dberm.sample`, bytes)).status).toBe(201);
    const client = await legacyClient(d.url, {
      elicit: async () => ({ action: 'accept', content: { colour: 'red' } }),
      sample: async () => ({ role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' }),
    });
    try {
      expect(relayed(await client.call('asks.elicit', ELICIT)).ok).toEqual({ action: 'accept', content: { colour: 'red' } });
      expect(String(relayed(await client.call('narrow.elicit', ELICIT)).refused)).toMatch(/narrow is not granted berm.elicit/);
      expect(relayed(await client.call('narrow.sample', SAMPLE)).ok).toMatchObject({ model: 'm' });
    } finally {
      await client.close();
    }
  });
});
