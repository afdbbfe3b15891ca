import { describe, expect, it } from 'vitest';
import { buildImage, sampleManifest, wat2wasm } from './helpers/wat.js';

describe('fixture helpers', () => {
  it('compiles WAT with bulk-memory code that V8 accepts', async () => {
    const bytes = await wat2wasm(`(module (memory (export "memory") 1)
      (func (export "fill") (memory.fill (i32.const 0) (i32.const 7) (i32.const 16))))`);
    const module = await WebAssembly.compile(bytes);
    expect(WebAssembly.Module.exports(module).map((e) => e.name)).toEqual(['memory', 'fill']);
  });

  it('attaches a .berm.abi custom section that V8 reports', async () => {
    const bytes = await buildImage('(module)', sampleManifest());
    const module = await WebAssembly.compile(bytes);
    const sections = WebAssembly.Module.customSections(module, '.berm.abi');
    expect(sections).toHaveLength(1);
    const text = new TextDecoder().decode(sections[0]);
    expect(JSON.parse(text.split('\n')[0]!).abi_version).toBe(1);
  });
});
