// idempotencyKey(): a harness that asks for its key imports the ABI's host call "berm" "idempotency_key"
// (and declares nothing for it), sends it an empty request, and reads the key or null from the answer.
// Built with the real compiler and transform, run on one instance whose host call the test answers.
import { build } from '@berm/guest/build';
import type { ManifestData } from '@berm/manifest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeProject, TestHost, writeProject } from './helpers/project.js';

const SOURCE = `import { idempotencyKey } from "@berm/guest";

/**
 * Answers its idempotency key, or "none".
 * @effect external_write
 * @retry idempotency_key
 */
export function key(): string {
  const k = idempotencyKey();
  return k === null ? "none" : k;
}

/**
 * Answers a number.
 * @query
 */
export function answer(): i32 {
  return 42;
}
`;

describe('idempotencyKey()', () => {
  let dir: string;
  let bytes: Uint8Array;
  let manifest: ManifestData;
  beforeAll(async () => {
    dir = await writeProject({ 'package.json': { name: 'keyed' }, 'assembly/index.ts': SOURCE });
    ({ bytes, manifest } = await build({ dir }));
  }, 180_000);
  afterAll(async () => {
    await removeProject(dir);
  });

  it('imports the ABI host call berm.idempotency_key, which the manifest does not declare', async () => {
    const imports = WebAssembly.Module.imports(await WebAssembly.compile(bytes)).map((i) => `${i.module}.${i.name}`);
    expect(imports).toContain('berm.idempotency_key');
    expect(manifest.deps.syscalls).toEqual({});
  });

  it('answers the key the host gives, and null when it gives none', async () => {
    const host = await TestHost.instantiate(bytes);
    host.answer = (call) => (call === 'berm.idempotency_key' ? { ok: 'order-42 "quoted"' } : { ok: null });
    expect(host.call('key')).toEqual({ ok: 'order-42 "quoted"' });
    expect(host.requests).toEqual([{ call: 'berm.idempotency_key', request: {} }]);
    host.answer = () => ({ ok: null });
    expect(host.call('key')).toEqual({ ok: 'none' });
  });

  it('turns a refusal into the tool’s error, saying what refused', async () => {
    const host = await TestHost.instantiate(bytes);
    host.answer = () => ({ refused: 'no key here' });
    const answer = host.call('key');
    expect(answer.error).toContain('berm.idempotency_key');
    expect(answer.error).toContain('no key here');
  });
});
