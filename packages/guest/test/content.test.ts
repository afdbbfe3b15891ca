// Content blocks, progress, elicitation and sampling from the guest library: a harness built with the
// real compiler and transform, its manifest (content kinds, the asking syscalls declared by the build),
// the requests its host calls send and what it makes of their answers (on a host of the test's own),
// its content answered by bermd's runtime (`@berm/guest/testing`), and the misuse a build refuses.
import { build, isGuestError, type Diagnostic } from '@berm/guest/build';
import { load } from '@berm/guest/testing';
import type { ManifestData } from '@berm/manifest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeProject, TestHost, writeProject } from './helpers/project.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

const SOURCE = `import { content, elicit, progress, sample } from "@berm/guest";

@json
class Reply {
  text: string = "";
}

@json
class Person {
  name: string = "";
  age: i32 = 0;
}

@json
class Sampled {
  content: Reply = new Reply();
}

/**
 * Answers a picture and a note.
 * @content text, image
 */
export function picture(): string {
  content.text("a picture:").image("${PNG}", "image/png");
  return "drawn";
}

/**
 * Answers every other kind.
 * @content audio resource_link resource
 */
export function others(): void {
  content
    .audio("UklGRg==", "audio/wav")
    .resourceLink("test://linked", "linked", "text/plain", "a \\"linked\\" one")
    .resourceLink("test://bare", "bare")
    .resource("test://embedded", "text/plain", "line\\nnext")
    .resourceBlob("test://blob", "image/png", "${PNG}");
}

/**
 * Adds a block, then fails.
 * @content text
 */
export function halfway(): void {
  content.text("never answered");
  throw new Error("failed halfway");
}

/** Reports three steps. */
export function steps(): bool {
  let all = true;
  for (let i = 0; i <= 2; i++) all = progress(<f64>(i * 50), 100, "step " + i.toString()) && all;
  return progress(150) && all;
}

/** Asks for a person. */
export function ask(): string {
  const answer = elicit("Who are you?", '{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"]}');
  if (answer.refused) return "refused: " + answer.message;
  if (!answer.accepted) return answer.action;
  const person = answer.content<Person>();
  return person.name + " " + person.age.toString() + " " + answer.contentJson;
}

/** Asks the model. */
export function think(): string {
  const answer = sample('{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}');
  if (!answer.ok) return "not sampled: " + answer.message;
  return answer.value<Sampled>().content.text;
}
`;

describe('content, progress and questions from a built harness', () => {
  let dir: string;
  let bytes: Uint8Array;
  let manifest: ManifestData;
  beforeAll(async () => {
    dir = await writeProject({ 'package.json': { name: 'rich' }, 'assembly/index.ts': SOURCE });
    ({ bytes, manifest } = await build({ dir }));
  }, 180_000);
  afterAll(async () => {
    await removeProject(dir);
  });

  const tool = (name: string) => manifest.tools.find((t) => t.name === name)!;

  it('writes each @content tag as the tool’s kinds, none for a tool without, and keeps the tag out of the description', () => {
    expect(tool('picture').content).toEqual(['text', 'image']);
    expect(tool('others').content).toEqual(['audio', 'resource_link', 'resource']);
    expect(tool('picture').description).toBe('Answers a picture and a note.');
    expect(tool('steps').content).toBeUndefined();
  });

  it('declares berm.elicit and berm.sample with no strings because the code makes them, and imports berm.progress undeclared', async () => {
    expect(manifest.deps?.syscalls).toEqual({ 'berm.elicit': [], 'berm.sample': [] });
    const imports = WebAssembly.Module.imports(await WebAssembly.compile(bytes)).map((i) => `${i.module}.${i.name}`);
    expect(imports.sort()).toEqual(['berm.elicit', 'berm.progress', 'berm.sample']);
  });

  it('answers the blocks beside the value, each in MCP’s shape, and drops the blocks of a call that failed', async () => {
    const host = await TestHost.instantiate(bytes);
    expect(host.call('picture')).toEqual({
      ok: 'drawn',
      content: [
        { type: 'text', text: 'a picture:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
      ],
    });
    expect(host.call('halfway')).toEqual({ error: 'failed halfway' });
    expect(host.call('others')).toEqual({
      ok: null,
      content: [
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'test://linked', name: 'linked', mimeType: 'text/plain', description: 'a "linked" one' },
        { type: 'resource_link', uri: 'test://bare', name: 'bare' },
        { type: 'resource', resource: { uri: 'test://embedded', mimeType: 'text/plain', text: 'line\nnext' } },
        { type: 'resource', resource: { uri: 'test://blob', mimeType: 'image/png', blob: PNG } },
      ],
    });
    // The next call starts with no blocks of its own.
    expect(host.call('steps')).toEqual({ ok: true });
  });

  it('is answered as MCP content by bermd’s runtime, which accepts every block', async () => {
    const harness = await load(bytes, { name: 'rich' });
    try {
      const answer = await harness.call('others', {});
      expect(answer.isError).toBe(false);
      expect(answer.content.map((c) => (c as { type: string }).type)).toEqual([
        'audio',
        'resource_link',
        'resource_link',
        'resource',
        'resource',
      ]);
      const picture = await harness.call('picture', {});
      expect(picture.content).toEqual([
        { type: 'text', text: 'a picture:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
      ]);
    } finally {
      await harness.close();
    }
  });

  it('sends progress with total and message when given, and tells a refused report', async () => {
    const host = await TestHost.instantiate(bytes);
    host.answer = (_call, request) => ((request as { progress: number }).progress > 100 ? { refused: 'past the total' } : { ok: null });
    expect(host.call('steps')).toEqual({ ok: false });
    expect(host.requests.map((r) => [r.call, r.request])).toEqual([
      ['berm.progress', { progress: 0, total: 100, message: 'step 0' }],
      ['berm.progress', { progress: 50, total: 100, message: 'step 1' }],
      ['berm.progress', { progress: 100, total: 100, message: 'step 2' }],
      ['berm.progress', { progress: 150 }],
    ]);
  });

  it('elicits with the schema as written, and reads an accepted answer, a declined one and a refusal', async () => {
    const host = await TestHost.instantiate(bytes);
    const answers: unknown[] = [
      { ok: { action: 'accept', content: { age: 36, name: 'Ada' } } },
      { ok: { action: 'decline' } },
      { refused: 'the client declared no elicitation capability' },
    ];
    host.answer = () => answers.shift();
    expect(host.call('ask')).toEqual({ ok: 'Ada 36 {"age":36,"name":"Ada"}' });
    expect(host.call('ask')).toEqual({ ok: 'decline' });
    expect(host.call('ask')).toEqual({ ok: 'refused: the client declared no elicitation capability' });
    expect(host.requests[0]).toEqual({
      call: 'berm.elicit',
      request: {
        message: 'Who are you?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name'] },
      },
    });
  });

  it('samples with the params as written, and reads the result', async () => {
    const host = await TestHost.instantiate(bytes);
    host.answer = () => ({
      ok: { role: 'assistant', content: { type: 'text', text: 'hello there' }, model: 'm', stopReason: 'endTurn' },
    });
    expect(host.call('think')).toEqual({ ok: 'hello there' });
    expect(host.requests).toEqual([
      { call: 'berm.sample', request: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 } },
    ]);
    host.answer = () => ({ refused: 'not over MCP' });
    expect(host.call('think')).toEqual({ ok: 'not sampled: not over MCP' });
  });
});

const BAD_TAGS = `/**
 * An unknown kind.
 * @content text,video
 */
export function badKind(): void {}

/**
 * A kind twice.
 * @content image image
 */
export function twice(): void {}
`;

const MISUSE = `import { content, sample } from "@berm/guest";

/**
 * Declares text and answers audio.
 * @content text
 */
export function undeclared(): void {
  content.audio("UklGRg==", "audio/wav");
}

/** Asks the model. */
export function think(): bool {
  return sample("{}").ok;
}
`;

/** The 1-based line and column of `needle` in `text`. */
function at(text: string, needle: string): { line: number; column: number } {
  const offset = text.indexOf(needle);
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

/** The diagnostics of a project that does not build. */
async function refused(files: Record<string, string | object>): Promise<Diagnostic[]> {
  const dir = await writeProject(files);
  try {
    const error = await build({ dir }).catch((e: unknown) => e);
    if (!isGuestError(error) || error.code !== 'build-error') throw new Error(`expected a build error, got ${String(error)}`);
    return (error.details as { diagnostics: Diagnostic[] }).diagnostics;
  } finally {
    await removeProject(dir);
  }
}

function find(diagnostics: Diagnostic[], pattern: RegExp): Diagnostic {
  const found = diagnostics.filter((d) => pattern.test(d.message));
  if (found.length !== 1) throw new Error(`expected one diagnostic matching ${pattern}, got ${JSON.stringify(diagnostics, null, 2)}`);
  return found[0]!;
}

describe('content and asking misused', () => {
  it('refuses an unknown kind and a kind named twice, at the tag', async () => {
    const diagnostics = await refused({ 'package.json': { name: 'tags' }, 'assembly/index.ts': BAD_TAGS });
    expect(find(diagnostics, /tool badKind:/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(BAD_TAGS, '@content text,video'),
      message: expect.stringContaining('"video", which is not a content kind'),
    });
    expect(find(diagnostics, /tool twice:/)).toMatchObject({
      ...at(BAD_TAGS, '@content image image'),
      message: expect.stringContaining('"image" twice'),
    });
  }, 180_000);

  it('refuses content of a kind no tool declares where the code adds it, and an asking syscall declared with strings at its declaration', async () => {
    const packageJson = { name: 'misuse', berm: { deps: { syscalls: { 'berm.sample': ['model.example.com'] } } } };
    const diagnostics = await refused({ 'package.json': packageJson, 'assembly/index.ts': MISUSE });
    expect(find(diagnostics, /adds audio content/)).toMatchObject({
      file: 'assembly/index.ts',
      ...at(MISUSE, 'audio("UklGRg=='),
      message: expect.stringContaining('add "@content audio"'),
    });
    expect(find(diagnostics, /declares berm.sample with/)).toMatchObject({
      file: 'package.json',
      line: 6,
      message: expect.stringContaining('takes no strings'),
    });
    expect(diagnostics).toHaveLength(2);
  }, 180_000);
});
