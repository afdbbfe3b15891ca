// The deploy checks, without a daemon: each refusal's code, and what passes.
import { describe, expect, it } from 'vitest';
import { BermdError } from 'bermd';
import { checkImage, digestOf, readSignatures } from '../dist/deploy/index.js';
import { harnessImage, manifestWithTools, sampleManifest } from '../../../test/helpers/harness.js';
import { abiImportsImage, refusals, withSyscall } from './refusals.js';

const policy = { servedSyscalls: new Set<string>() };

async function refusal(bytes: Uint8Array, p = policy): Promise<BermdError> {
  try {
    await checkImage(bytes, p);
  } catch (e) {
    expect(e).toBeInstanceOf(BermdError);
    return e as BermdError;
  }
  throw new Error('the image was accepted');
}

describe('checkImage', () => {
  it('accepts a harness that keeps the ABI and compiles it', async () => {
    const bytes = await harnessImage(manifestWithTools(['echo', 'size']));
    const checked = await checkImage(bytes, policy);
    expect(checked.digest).toBe(digestOf(bytes));
    expect(checked.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(checked.manifest.tools.map((t) => t.name)).toEqual(['echo', 'size']);
    expect(WebAssembly.Module.exports(checked.module).map((e) => e.name)).toContain('berm_tool_size');
  });

  it("accepts the ABI's own host calls", async () => {
    await expect(checkImage(await abiImportsImage(), policy)).resolves.toBeDefined();
  });

  it('accepts a declared syscall that the daemon serves', async () => {
    const bytes = await harnessImage(withSyscall('berm.http.fetch'), { imports: [{ name: 'berm.http.fetch' }] });
    await expect(checkImage(bytes, { servedSyscalls: new Set(['berm.http.fetch']) })).resolves.toBeDefined();
  });

  it('refuses a served syscall imported with the wrong signature', async () => {
    const bytes = await harnessImage(withSyscall('berm.http.fetch'), {
      imports: [{ name: 'berm.http.fetch', params: ['i32', 'i32'], results: ['i32'] }],
    });
    const e = await refusal(bytes, { servedSyscalls: new Set(['berm.http.fetch']) });
    expect(e.code).toBe('bad-import-signature');
    expect(e.message).toContain('(i32,i32)->i32');
  });

  for (const c of refusals) {
    it(`refuses ${c.title} with ${c.code}`, async () => {
      const e = await refusal(await c.image());
      expect(e.code).toBe(c.code);
      expect(e.status).toBe(c.status);
      if (c.reason !== undefined) expect(e.details.reason).toBe(c.reason);
      expect(e.toBody().error.code).toBe(c.code);
    });
  }

  it('lists every problem and is coded by the first', async () => {
    const bytes = await harnessImage(manifestWithTools(['a', 'b']), { omit: ['berm_tool_a', 'berm_tool_b'], imports: [{ name: 'env.x' }] });
    const e = await refusal(bytes);
    expect(e.code).toBe('missing-export');
    const problems = e.details.problems as { code: string; export?: string; import?: string }[];
    expect(problems.map((p) => [p.code, p.export ?? p.import])).toEqual([
      ['missing-export', 'berm_tool_a'],
      ['missing-export', 'berm_tool_b'],
      ['undeclared-import', 'env.x'],
    ]);
    expect(e.message).toContain('and 2 more problems');
  });

  it('names the signature it found and the one the ABI requires', async () => {
    const bytes = await harnessImage(sampleManifest(), { signatures: { berm_tool_echo: { params: ['i32'], results: [] } } });
    const e = await refusal(bytes);
    expect(e.message).toContain('berm_tool_echo has signature (i32)->()');
    expect(e.message).toContain('(i32,i32)->i64');
  });
});

describe('readSignatures', () => {
  it('numbers imported functions before defined ones', async () => {
    const bytes = await harnessImage(sampleManifest(), {
      imports: [{ name: 'berm.log' }, { name: 'berm.emit', params: ['i64'], results: ['f64'] }],
    });
    const { imports, exports } = readSignatures(bytes);
    expect(imports.map((i) => i.type)).toEqual([
      { params: ['i32', 'i32'], results: ['i64'] },
      { params: ['i64'], results: ['f64'] },
    ]);
    expect(exports.find((x) => x.name === 'berm_alloc')!.type).toEqual({ params: ['i32'], results: ['i32'] });
    expect(exports.find((x) => x.name === 'berm_tool_echo')!.type).toEqual({ params: ['i32', 'i32'], results: ['i64'] });
    expect(exports.find((x) => x.name === 'memory')).toEqual({ name: 'memory', kind: 'memory' });
  });
});
