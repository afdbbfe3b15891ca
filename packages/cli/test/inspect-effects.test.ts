// crab inspect and effect contracts: each declared effect shown on its tool's line, a tool of a
// program that reaches outside marked when its effect is undeclared, the contract kept whole in
// --json, and an image whose contract does not hold refused with its code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManifestData, ToolSpec } from '@berm/manifest';
import { buildImage, sampleManifest } from '../../../test/helpers/wat.js';
import { MINIMAL_WAT, runCli, Scratch } from './helpers/cli.js';

const args = { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] };

function shop(syscalls: Record<string, string[]>, extra: ToolSpec[] = []): ManifestData {
  return sampleManifest({
    tools: [
      {
        name: 'place',
        description: 'Places an order.',
        arguments: args,
        effect: { kind: 'external_write', retry: 'reconcile', reconcile: 'find', compensation: 'cancel' },
      },
      { name: 'find', description: 'Finds an order.', arguments: args, query: true },
      { name: 'cancel', description: 'Cancels an order.', arguments: args },
      { name: 'total', description: 'Adds up.', arguments: { type: 'object' }, effect: { kind: 'none' } },
      ...extra,
    ],
    deps: { programs: [], syscalls, secrets: [] },
  });
}

let scratch: Scratch;
const files: Record<string, string> = {};

beforeAll(async () => {
  scratch = await Scratch.create();
  files.outside = await scratch.write('outside.wasm', await buildImage(MINIMAL_WAT, shop({ 'berm.http.fetch': ['api.example.com'] })));
  files.inside = await scratch.write('inside.wasm', await buildImage(MINIMAL_WAT, shop({})));
  const broken = shop({}, []);
  (broken.tools[0]!.effect as { compensation: string }).compensation = 'refund';
  files.broken = await scratch.write('broken.wasm', await buildImage(MINIMAL_WAT, [JSON.stringify(broken)]));
});

afterAll(async () => {
  await scratch.remove();
});

describe('crab inspect: effects', () => {
  it('shows each declared effect, and marks an undeclared one of a program that reaches outside', async () => {
    const r = await runCli(['inspect', files.outside!]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.split('\n');
    expect(lines).toContain('  place(key: string)  writes outside (retry reconcile, reconcile find, compensation cancel)');
    expect(lines).toContain('  cancel(key: string)  effect undeclared');
    expect(lines).toContain('  total()  effect none');
    expect(lines).toContain('  find(key: string)  query');
  });

  it('leaves an undeclared effect unmarked when the program declares no outbound syscall', async () => {
    const r = await runCli(['inspect', files.inside!]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toContain('  cancel(key: string)');
    expect(r.stdout).not.toContain('effect undeclared');
  });

  it('keeps the contract in --json', async () => {
    const r = await runCli(['inspect', '--json', files.outside!]);
    expect(r.code).toBe(0);
    const tools = (JSON.parse(r.stdout) as ManifestData).tools;
    expect(tools[0]!.effect).toEqual({ kind: 'external_write', retry: 'reconcile', reconcile: 'find', compensation: 'cancel' });
    expect(tools[2]).not.toHaveProperty('effect');
  });

  it('refuses an image whose contract names a tool it does not declare, with the code and where', async () => {
    const r = await runCli(['inspect', '--json', files.broken!]);
    expect(r.code).toBe(2);
    const { error } = JSON.parse(r.stdout);
    expect(error).toMatchObject({ code: 'effect-unknown-tool', path: '/tools/0/effect/compensation' });
    expect(error.message).toContain('names compensation tool "refund"');
    const plain = await runCli(['inspect', files.broken!]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(`'${files.broken}' has an invalid manifest at /tools/0/effect/compensation`);
  });
});
