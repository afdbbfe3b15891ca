// What `berm mcp` and `berm call` read in place of the MCP SDK, held to the SDK on many inputs: the
// JSON-RPC guards (json-rpc.ts) to the SDK's schemas on every message of each kind with each member
// removed, added or replaced by each of a palette of values, and on pairs of such changes; the line
// framing to the SDK's ReadBuffer on texts cut into chunks at every place; the Server-Sent Events reader
// (mcp-http/sse.ts) to the SDK's own reading (TextDecoderStream, then eventsource-parser's stream) on
// streams of each line end, cut at every place.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import {
  isJSONRPCErrorResponse as sdkIsError,
  isJSONRPCNotification as sdkIsNotification,
  isJSONRPCRequest as sdkIsRequest,
  isJSONRPCResultResponse as sdkIsResult,
  parseJSONRPCMessage,
  ReadBuffer,
  serializeMessage as sdkSerialize,
} from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import {
  isJSONRPCErrorResponse,
  isJSONRPCMessage,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  LineBuffer,
  serializeMessage,
} from '../dist/json-rpc.js';
import { SseReader } from '../dist/mcp-http/sse.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const TASK = 'io.modelcontextprotocol/related-task';
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** A message of each kind, with the members the schemas look into. */
const MESSAGES: Json[] = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'a.b', arguments: { x: 1 }, _meta: { progressToken: 't', [TASK]: { taskId: 'k' } } },
  },
  { jsonrpc: '2.0', id: 'r', method: 'tools/list' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: { progressToken: 2 } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, result: { content: [], _meta: { [SERVER_INFO]: { name: 'bermd', version: '0' } } } },
  { jsonrpc: '2.0', id: 'x', result: {} },
  { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'bad', data: { code: 'c' } } },
  { jsonrpc: '2.0', error: { code: -32700, message: 'parse' } },
];

/** What a member is replaced with: a value of every JSON kind, and the numbers an id or a code may not be. */
const PALETTE: Json[] = [
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53,
  2 ** 53 - 1,
  -(2 ** 53),
  1e300,
  '',
  '2.0',
  '1.0',
  'x',
  [],
  [1],
  {},
  { taskId: 'k' },
  { taskId: 1 },
  { progressToken: 1.5 },
  { _meta: null },
  { _meta: [] },
  { code: 1, message: 'm' },
];

/** Every object or array in `value`, by its path. */
function places(value: Json, path: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [];
  const inner = Array.isArray(value)
    ? value.map((v, i) => places(v, [...path, i]))
    : Object.entries(value).map(([k, v]) => places(v, [...path, k]));
  return [path, ...inner.flat()];
}

function at(value: Json, path: (string | number)[]): Json {
  return path.reduce<Json>((v, key) => (v as Record<string, Json>)[key as string] as Json, value);
}

/** `value` with each single change: a member removed, one added, or one replaced by each palette value. */
function changes(value: Json): Json[] {
  const out: Json[] = [];
  for (const path of places(value)) {
    const target = at(value, path);
    const keys = Array.isArray(target) ? [...target.keys()] : Object.keys(target as object);
    const edit = (f: (o: Record<string, Json>) => void): void => {
      const copy = structuredClone(value);
      f(at(copy, path) as Record<string, Json>);
      out.push(copy);
    };
    for (const key of keys) {
      if (!Array.isArray(target)) edit((o) => delete o[key]);
      for (const replacement of PALETTE) edit((o) => (o[key] = replacement));
    }
    for (const extra of ['extra', 'id', 'method', 'params', 'result', 'error', 'jsonrpc', 'data', '_meta', '__proto__'])
      if (!Array.isArray(target))
        edit((o) => Object.defineProperty(o, extra, { value: 1, enumerable: true, writable: true, configurable: true }));
  }
  return out;
}

function sdkIsMessage(value: unknown): boolean {
  try {
    parseJSONRPCMessage(value);
    return true;
  } catch {
    return false;
  }
}

/** A deterministic sequence of numbers in [0, 1): the same cases on every run. */
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

describe('the JSON-RPC guards', () => {
  it("decide as the SDK's schemas do, on each kind of message changed once and twice", () => {
    const once = MESSAGES.flatMap((m) => [m, ...changes(m)]);
    const random = seeded(7);
    const twice = once.flatMap((m) => {
      const next = changes(m);
      return next.length === 0 ? [] : Array.from({ length: 10 }, () => next[Math.floor(random() * next.length)]!);
    });
    // As the relay reads them: from JSON text.
    const values: unknown[] = [...once, ...twice, ...PALETTE].map((v) => JSON.parse(JSON.stringify(v)));
    const differ: unknown[] = [];
    for (const value of values) {
      const ours = [isJSONRPCRequest(value), isJSONRPCNotification(value), isJSONRPCResultResponse(value), isJSONRPCErrorResponse(value)];
      const sdks = [sdkIsRequest(value), sdkIsNotification(value), sdkIsResult(value), sdkIsError(value)];
      if (JSON.stringify(ours) !== JSON.stringify(sdks) || isJSONRPCMessage(value) !== sdkIsMessage(value)) differ.push(value);
    }
    expect(differ).toEqual([]);
    // The cases reach every verdict: the comparison means something.
    expect(values.length).toBeGreaterThan(10_000);
    expect(values.filter(isJSONRPCMessage).length).toBeGreaterThan(1000);
    expect(values.filter((v) => !isJSONRPCMessage(v)).length).toBeGreaterThan(1000);
  });

  it('frame a message on one line as the SDK does', () => {
    for (const message of MESSAGES) expect(serializeMessage(message as never)).toBe(sdkSerialize(message as never));
  });
});

describe('the line framing', () => {
  it("reads what the SDK's ReadBuffer reads, the text cut anywhere: messages, lines passed over, and errors", () => {
    const text = [
      '{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n',
      'not json\n',
      '{"jsonrpc":"2.0","id":null,"method":"ping"}\n',
      '\n',
      '{"jsonrpc":"2.0","method":"notifications/initialized","params":{"é":"ü"}}\n',
      '{"jsonrpc":"2.0","id":2,"result":{}}\r\n',
      '{"jsonrpc":"2.0","id":3,',
    ].join('');
    const bytes = Buffer.from(text, 'utf8');
    const read = (buffer: { append(b: Buffer): void; readMessage(): unknown }, cuts: number[]): unknown[] => {
      const out: unknown[] = [];
      let from = 0;
      for (const to of [...cuts, bytes.length]) {
        buffer.append(bytes.subarray(from, to));
        from = to;
        for (;;) {
          try {
            const message = buffer.readMessage();
            if (message === null) break;
            out.push(message);
          } catch {
            out.push('error');
          }
        }
      }
      return out;
    };
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (const second of [cut, Math.min(bytes.length, cut + 1), Math.min(bytes.length, cut + 7)]) {
        const cuts = [cut, second];
        expect(read(new LineBuffer(), cuts)).toEqual(read(new ReadBuffer(), cuts));
      }
    }
    expect(read(new LineBuffer(), [])).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      'error',
      { jsonrpc: '2.0', method: 'notifications/initialized', params: { é: 'ü' } },
      { jsonrpc: '2.0', id: 2, result: {} },
    ]);
  });

  it('refuses to hold more than its bound without a line end, as the SDK does', () => {
    const ours = new LineBuffer(16);
    const sdk = new ReadBuffer({ maxBufferSize: 16 });
    const chunk = Buffer.from('{"jsonrpc":"2.0",');
    expect(() => sdk.append(chunk)).toThrow();
    expect(() => ours.append(chunk)).toThrow(/more than 16 bytes/);
  });
});

/** The SDK's reading of an event stream: bytes decoded as UTF-8, then eventsource-parser's stream. */
async function sdkEvents(chunks: Buffer[]): Promise<{ event?: string; data: string }[]> {
  const fromClient = createRequire(import.meta.resolve('@modelcontextprotocol/client'));
  const { EventSourceParserStream } = (await import(pathToFileURL(fromClient.resolve('eventsource-parser/stream')).href)) as {
    EventSourceParserStream: new () => TransformStream<string, { event?: string; data: string }>;
  };
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new Uint8Array(chunk));
      controller.close();
    },
  });
  const out: { event?: string; data: string }[] = [];
  const reader = source.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read())
    out.push({ ...(next.value.event === undefined ? {} : { event: next.value.event }), data: next.value.data });
  return out;
}

function ourEvents(chunks: Buffer[]): { event?: string; data: string }[] {
  const out: { event?: string; data: string }[] = [];
  const reader = new SseReader((e) => out.push(e));
  for (const chunk of chunks) reader.write(chunk);
  return out;
}

describe('the Server-Sent Events reader', () => {
  it('reads the events the SDK reads, whatever the line ends and wherever the stream is cut', async () => {
    const body = (end: string): string =>
      [
        '\ufeff: a comment',
        'event: message',
        'id: 7',
        'retry: 10',
        'data: {"a":',
        'data:1}',
        '',
        'data',
        '',
        '',
        'event:',
        'data: é ü',
        'unknown: field',
        '',
        'event: other',
        'data: {"b":2}',
        '',
        'data: {"unfinished":true}',
      ].join(end);
    for (const end of ['\n', '\r\n']) {
      const bytes = Buffer.from(body(end), 'utf8');
      for (let cut = 0; cut <= bytes.length; cut++) {
        const chunks = [bytes.subarray(0, cut), bytes.subarray(cut)];
        expect(ourEvents(chunks)).toEqual(await sdkEvents(chunks));
      }
      const bytewise = [...bytes].map((b) => Buffer.from([b]));
      expect(ourEvents(bytewise)).toEqual(await sdkEvents(bytewise));
    }
    // A bare CR ends a line too. eventsource-parser holds a CR that ends a chunk, in case an LF follows,
    // and misses the line it ended when the next chunk has no line end of its own: so the two are
    // compared on the whole stream, and the reader here with itself wherever the stream is cut.
    const bytes = Buffer.from(body('\r'), 'utf8');
    const whole = ourEvents([bytes]);
    expect(whole).toEqual(await sdkEvents([bytes]));
    for (let cut = 0; cut <= bytes.length; cut++) expect(ourEvents([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(whole);
    expect(ourEvents([Buffer.from(body('\r\n'))])).toEqual([
      { event: 'message', data: '{"a":\n1}' },
      { data: '' },
      { data: 'é ü' },
      { event: 'other', data: '{"b":2}' },
    ]);
  });
});
