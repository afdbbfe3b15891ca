import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script without type declarations
import { buildExample, exampleNames } from '../examples/build.js';

describe('shipped example images', () => {
  it('each committed image is exactly what its WAT and manifest.json build to', async () => {
    const names: string[] = await exampleNames();
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const committed = new Uint8Array(await readFile(new URL(`../examples/${name}.wasm`, import.meta.url)));
      const rebuilt: Uint8Array = await buildExample(name);
      expect(Buffer.from(committed).equals(Buffer.from(rebuilt)), `examples/${name}.wasm is stale: run node examples/build.js`).toBe(true);
    }
  });
});
