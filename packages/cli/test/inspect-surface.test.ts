// crab inspect and a program's prompts and resources: listed in their own sections (only when declared),
// kept whole in --json, and an image whose template is not one refused with its code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManifestData } from '@berm/manifest';
import { buildImage, sampleManifest } from '../../../test/helpers/wat.js';
import { MINIMAL_WAT, runCli, Scratch } from './helpers/cli.js';

function declaring(over: Partial<ManifestData> = {}): ManifestData {
  return sampleManifest({
    prompts: [
      {
        name: 'greet',
        description: 'Greets someone.',
        arguments: [
          { name: 'who', description: '', required: true, complete: true },
          { name: 'tone', description: '' },
        ],
      },
    ],
    resources: [{ path: 'static-text', name: 'Static', description: 'Some text.', mimeType: 'text/plain' }],
    resource_templates: [{ path: 'items/{id}', name: 'Item', description: '' }],
    ...over,
  });
}

let scratch: Scratch;
const files: Record<string, string> = {};

beforeAll(async () => {
  scratch = await Scratch.create();
  files.full = await scratch.write('full.wasm', await buildImage(MINIMAL_WAT, declaring()));
  files.bare = await scratch.write('bare.wasm', await buildImage(MINIMAL_WAT, sampleManifest()));
  const broken = declaring({ resource_templates: [{ path: 'items/{id*}', name: 'Item', description: '' }] });
  files.broken = await scratch.write('broken.wasm', await buildImage(MINIMAL_WAT, [JSON.stringify(broken)]));
});

afterAll(async () => {
  await scratch.remove();
});

describe('crab inspect: prompts and resources', () => {
  it('lists prompts with their arguments and resources with their paths, after the events', async () => {
    const r = await runCli(['inspect', files.full!]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.split('\n');
    const prompts = lines.indexOf('Prompts (1)');
    expect(prompts).toBeGreaterThan(lines.findIndex((l) => l.startsWith('Events')));
    expect(lines[prompts + 1]).toBe('  greet(who~, tone?)');
    expect(lines[prompts + 2]).toBe('      Greets someone.');
    const resources = lines.indexOf('Resources (2)');
    expect(lines.slice(resources + 1, resources + 4)).toEqual([
      '  static-text  Static  text/plain',
      '      Some text.',
      '  items/{id}  Item  template',
    ]);
  });

  it('shows neither section for an image that declares none', async () => {
    const r = await runCli(['inspect', files.bare!]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('Prompts');
    expect(r.stdout).not.toContain('Resources');
  });

  it('keeps them whole in --json', async () => {
    const r = await runCli(['inspect', '--json', files.full!]);
    const manifest = JSON.parse(r.stdout) as ManifestData;
    expect(manifest.prompts).toEqual(declaring().prompts);
    expect(manifest.resource_templates).toEqual(declaring().resource_templates);
  });

  it('refuses a template that is not a level-1 template, with its code and place', async () => {
    const r = await runCli(['inspect', '--json', files.broken!]);
    expect(r.code).toBe(2);
    const { error } = JSON.parse(r.stdout);
    expect(error).toMatchObject({ code: 'resource-template-invalid', path: '/resource_templates/0/path' });
    expect(error.message).toContain('not a level-1 variable');
    const plain = await runCli(['inspect', files.broken!]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('/resource_templates/0/path');
    expect(plain.stderr).toContain('items/{id*}');
  });
});
