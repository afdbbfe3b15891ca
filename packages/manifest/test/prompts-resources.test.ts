import { describe, expect, it } from 'vitest';
import { breaks, Manifest, matchTemplate, parseTemplate, type ManifestErrorCode } from '@berm/manifest';
import { expectCode, manifestError } from './support.js';

/** A program with one prompt, one resource and one template, each member overridable. */
function program(over: Record<string, unknown> = {}) {
  return {
    abi_version: 1,
    tools: [],
    prompts: [{ name: 'greet', description: 'Greets', arguments: [{ name: 'who', required: true, complete: true }, { name: 'tone' }] }],
    resources: [{ path: 'static-text', name: 'Static', mimeType: 'text/plain' }],
    resource_templates: [{ path: 'template/{id}/data', name: 'By id', complete: ['id'] }],
    ...over,
  };
}

function refused(value: unknown, code: ManifestErrorCode, path: string): string {
  const error = manifestError(() => Manifest.fromJSON(value));
  expectCode(error, code);
  expect(error.path).toBe(path);
  expect(error.message).toContain(`at ${path}`);
  return error.message;
}

describe('prompts and resources: what the reader accepts', () => {
  it('normalizes prompts, resources and templates, filling descriptions and arguments', () => {
    const m = Manifest.fromJSON(program({ prompts: [{ name: 'bare' }] }));
    expect(m.data.prompts).toEqual([{ name: 'bare', description: '', arguments: [] }]);
    expect(m.data.resources).toEqual([{ path: 'static-text', name: 'Static', description: '', mimeType: 'text/plain' }]);
    expect(m.data.resource_templates).toEqual([{ path: 'template/{id}/data', name: 'By id', description: '', complete: ['id'] }]);
  });

  it('leaves the members out of a manifest that declares none, so older images read as they did', () => {
    const m = Manifest.fromJSON({ abi_version: 1 });
    expect(Object.keys(m.data)).not.toContain('prompts');
    expect(Object.keys(m.data)).not.toContain('resources');
    expect(Object.keys(m.data)).not.toContain('resource_templates');
  });

  it('refuses a second prompt of one name, and an argument named twice', () => {
    refused(program({ prompts: [{ name: 'a' }, { name: 'a' }] }), 'invalid-manifest', '/prompts/1/name');
    refused(
      program({ prompts: [{ name: 'a', arguments: [{ name: 'x' }, { name: 'x' }] }] }),
      'invalid-manifest',
      '/prompts/0/arguments/1/name',
    );
    refused(program({ prompts: [{ name: 'bad name' }] }), 'invalid-manifest', '/prompts/0/name');
  });

  it('refuses the usage path, a path that is not a URI path, and a path declared twice', () => {
    expect(refused(program({ resources: [{ path: 'usage', name: 'u' }] }), 'resource-path-reserved', '/resources/0/path')).toContain(
      'usage',
    );
    refused(program({ resources: [{ path: '/leading', name: 'x' }] }), 'resource-path-invalid', '/resources/0/path');
    refused(program({ resources: [{ path: 'a b', name: 'x' }] }), 'resource-path-invalid', '/resources/0/path');
    refused(program({ resources: [{ path: '', name: 'x' }] }), 'resource-path-invalid', '/resources/0/path');
    refused(
      program({ resources: [{ path: 'a', name: 'x' }], resource_templates: [{ path: 'a', name: 'y' }] }),
      'resource-template-invalid',
      '/resource_templates/0/path',
    );
    refused(
      program({
        resources: [
          { path: 'a', name: 'x' },
          { path: 'a', name: 'y' },
        ],
      }),
      'invalid-manifest',
      '/resources/1/path',
    );
  });

  it('refuses templates that are not level 1, and completing a variable a template lacks', () => {
    for (const path of ['t/{+id}', 't/{id*}', 't/{a,b}', 't/{id', 't/id}', 't/{a}{b}', 't/{a}/{a}', '{a}//x']) {
      refused(program({ resource_templates: [{ path, name: 'x' }] }), 'resource-template-invalid', '/resource_templates/0/path');
    }
    const message = refused(
      program({ resource_templates: [{ path: 't/{id}', name: 'x', complete: ['other'] }] }),
      'resource-template-invalid',
      '/resource_templates/0/complete/0',
    );
    expect(message).toContain('other');
  });
});

describe('templates: matching a path', () => {
  it('gives each variable its percent-decoded segment, and nothing for a path of another shape', () => {
    const parts = parseTemplate('template/{id}/data');
    if (typeof parts === 'string') throw new Error(parts);
    expect(matchTemplate(parts, 'template/123/data')).toEqual({ id: '123' });
    expect(matchTemplate(parts, 'template/a%20b/data')).toEqual({ id: 'a b' });
    expect(matchTemplate(parts, 'template/1/2/data')).toBeUndefined();
    expect(matchTemplate(parts, 'template//data')).toBeUndefined();
    expect(matchTemplate(parts, 'template/%ZZ/data')).toBeUndefined();
  });
});

describe('breaks: prompts and resources', () => {
  const old = Manifest.fromJSON(program()).data;

  it('lists a removed prompt, resource and template, each by its name or path', () => {
    const next = Manifest.fromJSON(program({ prompts: [], resources: [], resource_templates: [] })).data;
    expect(breaks(old, next).map((b) => [b.code, b.prompt ?? b.resource])).toEqual([
      ['prompt-removed', 'greet'],
      ['resource-removed', 'static-text'],
      ['resource-removed', 'template/{id}/data'],
    ]);
  });

  it('lists an argument newly required and a new required one, and nothing for a new optional one', () => {
    const next = Manifest.fromJSON(
      program({
        prompts: [
          {
            name: 'greet',
            arguments: [
              { name: 'who', required: true },
              { name: 'tone', required: true },
              { name: 'lang', required: true },
              { name: 'extra' },
            ],
          },
        ],
      }),
    ).data;
    const found = breaks(old, next);
    expect(found.map((b) => [b.code, b.prompt, b.path])).toEqual([
      ['prompt-argument-required', 'greet', '/arguments/1'],
      ['prompt-argument-required', 'greet', '/arguments/2'],
    ]);
    expect(found[0]!.message).toContain('was optional');
    expect(found[1]!.message).toContain('is new');
  });

  it('finds nothing in added prompts and resources', () => {
    const next = Manifest.fromJSON(
      program({
        prompts: [...program().prompts, { name: 'more', arguments: [{ name: 'x', required: true }] }],
        resources: [...program().resources, { path: 'another', name: 'A' }],
      }),
    ).data;
    expect(breaks(old, next)).toEqual([]);
  });
});
