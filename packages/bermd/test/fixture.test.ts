// The fixture images the daemon's tests deploy: V8 compiles them and their tools answer per the ABI.
import { describe, expect, it } from 'vitest';
import { readSignatures } from '../dist/deploy/index.js';
import { harnessImage, harnessWat, manifestWithTools } from '../../../test/helpers/harness.js';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

async function callTool(bytes: Uint8Array, tool: string, args: unknown): Promise<unknown> {
  const { instance } = (await WebAssembly.instantiate(bytes, {})) as unknown as { instance: WebAssembly.Instance };
  const exports = instance.exports as Record<string, unknown>;
  const memory = exports.memory as WebAssembly.Memory;
  const alloc = exports.berm_alloc as (len: number) => number;
  const input = encoder.encode(JSON.stringify(args));
  const ptr = alloc(input.length);
  new Uint8Array(memory.buffer).set(input, ptr);
  const packed = (exports[`berm_tool_${tool}`] as (p: number, l: number) => bigint)(ptr, input.length);
  const outPtr = Number(packed >> 32n);
  const outLen = Number(packed & 0xffffffffn);
  return JSON.parse(decoder.decode(new Uint8Array(memory.buffer, outPtr, outLen)));
}

describe('harness fixture', () => {
  it('echoes the arguments of every tool in an {"ok": ...} envelope', async () => {
    const bytes = await harnessImage(manifestWithTools(['echo', 'other']));
    expect(await callTool(bytes, 'echo', { query: 'hi' })).toEqual({ ok: { query: 'hi' } });
    expect(await callTool(bytes, 'other', { n: [1, 2] })).toEqual({ ok: { n: [1, 2] } });
  });

  it('answers a constant envelope when asked to', async () => {
    const bytes = await harnessImage(manifestWithTools(['a', 'b']), { tools: { b: { kind: 'const', envelope: { error: 'no' } } } });
    expect(await callTool(bytes, 'b', {})).toEqual({ error: 'no' });
    expect(await callTool(bytes, 'a', { x: 1 })).toEqual({ ok: { x: 1 } });
  });

  it('grows memory when arguments pass the end of the first page', async () => {
    const bytes = await harnessImage(manifestWithTools(['echo']));
    const big = 'x'.repeat(200_000);
    expect(await callTool(bytes, 'echo', { big })).toEqual({ ok: { big } });
  });

  it('produces the signatures, omissions and imports it is asked for', async () => {
    const manifest = manifestWithTools(['echo']);
    const bytes = await harnessImage(manifest, {
      omit: ['memory'],
      signatures: { berm_tool_echo: { params: ['i32'], results: ['i32'] } },
      imports: [{ name: 'berm.log' }, { name: 'env.thing', params: ['i32'], results: [] }, { name: 'env.g', kind: 'global' }],
    });
    await WebAssembly.compile(bytes);
    const sig = readSignatures(bytes);
    expect(sig.exports.map((e) => e.name)).toEqual(['berm_alloc', 'berm_tool_echo']);
    expect(sig.exports[1]!.type).toEqual({ params: ['i32'], results: ['i32'] });
    expect(sig.exports[0]!.type).toEqual({ params: ['i32'], results: ['i32'] });
    expect(sig.imports).toEqual([
      { module: 'berm', field: 'log', kind: 'function', type: { params: ['i32', 'i32'], results: ['i64'] } },
      { module: 'env', field: 'thing', kind: 'function', type: { params: ['i32'], results: [] } },
      { module: 'env', field: 'g', kind: 'global' },
    ]);
  });

  it('pads images to a size with filler that depends on the seed', async () => {
    const a = await harnessImage(manifestWithTools(['echo']), { padBytes: 1 << 20, padSeed: 1 });
    const b = await harnessImage(manifestWithTools(['echo']), { padBytes: 1 << 20, padSeed: 2 });
    expect(a.length).toBeGreaterThan(1 << 20);
    expect(a.length).toBe(b.length);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
    await WebAssembly.compile(a);
  });

  it('writes readable WAT', () => {
    expect(harnessWat(manifestWithTools(['echo']))).toContain('(export "berm_tool_echo")');
  });
});
