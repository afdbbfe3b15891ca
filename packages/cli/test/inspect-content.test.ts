// crab inspect and a tool's content kinds: shown on its tool's line, kept whole in --json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, sampleManifest } from '../../../test/helpers/wat.js';
import { MINIMAL_WAT, runCli, Scratch } from './helpers/cli.js';

let scratch: Scratch;
let file: string;

beforeAll(async () => {
  scratch = await Scratch.create();
  const manifest = sampleManifest({
    tools: [
      { name: 'draw', description: 'Draws.', arguments: { type: 'object' }, content: ['image', 'resource'] },
      { name: 'count', description: 'Counts.', arguments: { type: 'object' } },
    ],
  });
  file = await scratch.write('draw.wasm', await buildImage(MINIMAL_WAT, manifest));
});

afterAll(async () => {
  await scratch.remove();
});

describe('crab inspect: content kinds', () => {
  it('shows the kinds a tool may answer on its line, and nothing on a tool that declares none', async () => {
    const r = await runCli(['inspect', file]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.split('\n');
    expect(lines).toContain('  draw()  content image,resource');
    expect(lines).toContain('  count()');
  });

  it('keeps them in --json', async () => {
    const r = await runCli(['inspect', '--json', file]);
    expect(r.code).toBe(0);
    const tools = (JSON.parse(r.stdout) as { tools: Array<{ name: string; content?: string[] }> }).tools;
    expect(tools.find((t) => t.name === 'draw')?.content).toEqual(['image', 'resource']);
  });
});
