import { describe, expect, it } from 'vitest';
import { stoppedAt } from './helpers/timeouts.js';
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

  it('matches a stopped call with or without the time it waited for a worker, and nothing else', () => {
    const stopped = stoppedAt('a.spin', 500, '; it had sent its 8 bytes');
    expect('a.spin did not finish within 500 ms and was stopped; it had sent its 8 bytes').toMatch(stopped);
    expect('a.spin did not finish within 500 ms, 4 ms of it waiting for a worker, and was stopped; it had sent its 8 bytes').toMatch(
      stopped,
    );
    expect('a.spin did not finish within 500 ms and was stopped').not.toMatch(stopped);
    expect('a.spin did not finish within 5000 ms and was stopped; it had sent its 8 bytes').not.toMatch(stopped);
    expect('aXspin did not finish within 500 ms and was stopped; it had sent its 8 bytes').not.toMatch(stopped);
  });
});
