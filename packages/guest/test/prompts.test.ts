// Prompts written as `@prompt` functions: rendered into the manifest (arguments from the parameter's
// fields, required unless nullable) by a real build, exported as berm_prompt_NAME, and answering the
// ABI's envelope when the host calls them as bermd does; a prompt of another shape refused where written.
// resourceUpdated() makes the berm.resource_updated host call.
import { build, isGuestError, type Diagnostic } from '@berm/guest/build';
import type { ManifestData } from '@berm/manifest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeProject, TestHost, writeProject } from './helpers/project.js';

const SOURCE = `import { resourceUpdated } from "@berm/guest";

@json
class Greeting {
  /** Who is greeted. */
  who: string = "";
  /** How. */
  tone: string | null = null;
}

/**
 * Greets someone.
 * @prompt
 */
export function greet(args: Greeting): string {
  const tone = args.tone;
  return "Greet " + args.who + (tone === null ? "" : " in a " + tone + " tone") + ".";
}

/** @prompt */
export function hello(): string {
  return "Hello.";
}

/** A tool beside them, which says a resource changed. */
export function add(): i32 {
  return resourceUpdated("counter") ? 2 : 0;
}
`;

const BAD = `/** @prompt */
export function counted(): i32 {
  return 1;
}
`;

describe('@prompt functions', () => {
  let dir: string;
  let manifest: ManifestData;
  let host: TestHost;
  beforeAll(async () => {
    dir = await writeProject({
      'package.json': { name: 'prompts', berm: { deps: { syscalls: { 'berm.resource_updated': [] } } } },
      'assembly/index.ts': SOURCE,
    });
    const built = await build({ dir });
    manifest = built.manifest;
    host = await TestHost.instantiate(built.bytes);
  }, 180_000);
  afterAll(async () => {
    await removeProject(dir);
  });

  it('are prompts in the manifest, not tools, with their arguments', () => {
    expect(manifest.tools.map((t) => t.name)).toEqual(['add']);
    expect(manifest.prompts).toEqual([
      {
        name: 'greet',
        description: 'Greets someone.',
        arguments: [
          { name: 'who', description: 'Who is greeted.', required: true },
          { name: 'tone', description: 'How.' },
        ],
      },
      { name: 'hello', description: '', arguments: [] },
    ]);
  });

  it('are exported as berm_prompt_NAME and answer one user message from the arguments given', () => {
    expect(host.callExport('berm_prompt_greet', { arguments: { who: 'Ada', tone: 'warm' } })).toEqual({
      ok: { messages: [{ role: 'user', content: { type: 'text', text: 'Greet Ada in a warm tone.' } }] },
    });
    expect(host.callExport('berm_prompt_greet', { arguments: { who: 'Bo' } })).toEqual({
      ok: { messages: [{ role: 'user', content: { type: 'text', text: 'Greet Bo.' } }] },
    });
    expect(host.callExport('berm_prompt_hello', { arguments: {} })).toEqual({
      ok: { messages: [{ role: 'user', content: { type: 'text', text: 'Hello.' } }] },
    });
    expect(host.call('add')).toEqual({ ok: 2 });
    expect(host.requests).toEqual([{ call: 'berm.resource_updated', request: { path: 'counter' } }]);
  });
});

describe('@prompt refused', () => {
  it('refuses a prompt that does not return a string, where its return type is written', async () => {
    const dir = await writeProject({ 'package.json': { name: 'bad' }, 'assembly/index.ts': BAD });
    try {
      const error = await build({ dir }).catch((e: unknown) => e);
      if (!isGuestError(error) || error.code !== 'build-error') throw new Error(`expected a build error, got ${String(error)}`);
      const diagnostics = (error.details as { diagnostics: Diagnostic[] }).diagnostics;
      const found = diagnostics.find((d) => d.message.includes('prompt counted'));
      expect(found?.message).toContain(
        'prompt counted: a prompt returns the string its one user message holds, or the Messages it answers, not i32',
      );
      // At `i32`, the return type: `export function counted(): i32`.
      expect(found).toMatchObject({ file: 'assembly/index.ts', line: 2, column: 28 });
    } finally {
      await removeProject(dir);
    }
  }, 180_000);
});
