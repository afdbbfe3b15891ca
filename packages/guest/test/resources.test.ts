// Resources, templates, completions and prompts of several messages written in AssemblyScript: a real
// build renders them into the manifest and generates berm_resource_read and berm_complete, which answer
// the ABI's envelopes when called as bermd calls them; misuse is refused where it is written.
import { build, isGuestError, type Diagnostic } from '@berm/guest/build';
import type { ManifestData } from '@berm/manifest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeProject, TestHost, writeProject } from './helpers/project.js';

const SOURCE = `import { Messages, Role } from "@berm/guest";

/**
 * Today's note.
 * @resource notes/today
 */
export function today(): string {
  return "Buy milk.";
}

/**
 * Some bytes.
 * @resource raw.bin
 * @mime application/x-test
 */
export function raw(): Uint8Array {
  const bytes = new Uint8Array(5);
  for (let i = 0; i < 5; i++) bytes[i] = <u8>(250 + i);
  return bytes;
}

@json
class Item {
  shelf: string = "";
  id: string = "";
}

/**
 * An item on a shelf.
 * @template shelves/{shelf}/items/{id}
 * @mime application/json
 */
export function item(vars: Item): string {
  return "{\\"shelf\\":\\"" + vars.shelf + "\\",\\"id\\":\\"" + vars.id + "\\"}";
}

/** @complete shelves/{shelf}/items/{id} shelf */
export function shelves(value: string): string[] {
  const out = new Array<string>();
  if ("north".startsWith(value)) out.push("north");
  if ("south".startsWith(value)) out.push("south");
  return out;
}

@json
class Ask {
  /** The city. */
  city: string = "";
}

/**
 * Asks about a city, showing it.
 * @prompt
 */
export function ask(args: Ask): Messages {
  return new Messages()
    .text("Tell me about " + args.city + ".")
    .image("AAAA", "image/png")
    .resource("notes://" + args.city, "text/plain", "A note.", Role.Assistant);
}

/** @complete ask city */
export function cities(value: string): string[] {
  return [value + "ville", value + "burg"];
}
`;

describe('@resource, @template, @complete and Messages', () => {
  let dir: string;
  let manifest: ManifestData;
  let host: TestHost;
  beforeAll(async () => {
    dir = await writeProject({ 'package.json': { name: 'shelf' }, 'assembly/index.ts': SOURCE });
    const built = await build({ dir });
    manifest = built.manifest;
    host = await TestHost.instantiate(built.bytes);
  }, 180_000);
  afterAll(async () => {
    await removeProject(dir);
  });

  it('are in the manifest: resources, templates and completed arguments, none of them tools', () => {
    expect(manifest.tools).toEqual([]);
    expect(manifest.resources).toEqual([
      { path: 'notes/today', name: 'today', description: "Today's note.", mimeType: 'text/plain' },
      { path: 'raw.bin', name: 'raw', description: 'Some bytes.', mimeType: 'application/x-test' },
    ]);
    expect(manifest.resource_templates).toEqual([
      {
        path: 'shelves/{shelf}/items/{id}',
        name: 'item',
        description: 'An item on a shelf.',
        mimeType: 'application/json',
        complete: ['shelf'],
      },
    ]);
    expect(manifest.prompts).toEqual([
      {
        name: 'ask',
        description: 'Asks about a city, showing it.',
        arguments: [{ name: 'city', description: 'The city.', required: true, complete: true }],
      },
    ]);
  });

  it('reads a resource as text, bytes as Base64, and a template with its variables', () => {
    expect(host.callExport('berm_resource_read', { path: 'notes/today' })).toEqual({ ok: { contents: [{ text: 'Buy milk.' }] } });
    expect(host.callExport('berm_resource_read', { path: 'raw.bin' })).toEqual({
      ok: { contents: [{ blob: Buffer.from([250, 251, 252, 253, 254]).toString('base64') }] },
    });
    expect(
      host.callExport('berm_resource_read', {
        path: 'shelves/north/items/7',
        template: 'shelves/{shelf}/items/{id}',
        variables: { shelf: 'north', id: '7' },
      }),
    ).toEqual({ ok: { contents: [{ text: '{"shelf":"north","id":"7"}' }] } });
  });

  it('answers a read of a path no function serves as a failure naming it', () => {
    expect(host.callExport('berm_resource_read', { path: 'notes/yesterday' })).toEqual({
      error: expect.stringMatching(/^no @resource or @template function answers notes\/yesterday /),
    });
  });

  it('completes a prompt argument and a template variable, and nothing else', () => {
    expect(host.callExport('berm_complete', { ref: { type: 'prompt', name: 'ask' }, argument: { name: 'city', value: 'Ro' } })).toEqual({
      ok: { values: ['Roville', 'Roburg'] },
    });
    expect(
      host.callExport('berm_complete', {
        ref: { type: 'resource', path: 'shelves/{shelf}/items/{id}' },
        argument: { name: 'shelf', value: 'so' },
        context: { arguments: { id: '7' } },
      }),
    ).toEqual({ ok: { values: ['south'] } });
    expect(
      host.callExport('berm_complete', {
        ref: { type: 'resource', path: 'shelves/{shelf}/items/{id}' },
        argument: { name: 'id', value: '' },
      }),
    ).toEqual({ ok: { values: [] } });
  });

  it('answers a prompt of several messages, of each kind and role built', () => {
    expect(host.callExport('berm_prompt_ask', { arguments: { city: 'Oslo' } })).toEqual({
      ok: {
        messages: [
          { role: 'user', content: { type: 'text', text: 'Tell me about Oslo.' } },
          { role: 'user', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
          { role: 'assistant', content: { type: 'resource', resource: { uri: 'notes://Oslo', mimeType: 'text/plain', text: 'A note.' } } },
        ],
      },
    });
  });
});

/** The build errors of `source`, which must not build. */
async function buildErrors(source: string): Promise<Diagnostic[]> {
  const dir = await writeProject({ 'package.json': { name: 'bad' }, 'assembly/index.ts': source });
  try {
    const error = await build({ dir }).catch((e: unknown) => e);
    if (!isGuestError(error) || error.code !== 'build-error') throw new Error(`expected a build error, got ${String(error)}`);
    return (error.details as { diagnostics: Diagnostic[] }).diagnostics;
  } finally {
    await removeProject(dir);
  }
}

describe('@resource, @template and @complete refused', () => {
  it('refuses each misuse where it is written', async () => {
    const diagnostics = await buildErrors(`@json
class Vars {
  other: string = "";
}

/** @resource counts */
export function counts(): i32 {
  return 1;
}

/** @template items/{id} */
export function items(vars: Vars): string {
  return vars.other;
}

/** @complete missing arg */
export function nothing(value: string): string[] {
  return [value];
}

/**
 * @resource twice
 * @prompt
 */
export function both(): string {
  return "";
}
`);
    const messages = diagnostics.map((d) => `${d.line}:${d.column} ${d.message.replace("Transform 'berm': ", '')}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        '7:27 resource counts: a resource returns its contents, a string (text) or a Uint8Array (bytes), not i32',
        '12:29 template items: template items/{id} has no variable {other}, which field other of Vars would hold',
        '17:17 complete nothing: no @prompt missing with an argument arg',
        '25:17 both is tagged @prompt and @resource; a function is one of them',
      ]),
    );
  }, 180_000);
});
