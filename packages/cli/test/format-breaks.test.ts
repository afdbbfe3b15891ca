import { describe, expect, it } from 'vitest';
import { breaks, type Break, type ManifestData, type ToolSpec } from '@berm/manifest';
import { formatBreaksGithub, formatBreaksJson, formatBreaksMarkdown, formatBreaksText } from '@berm/cli';
import { tagged } from './helpers/cli.js';

const sample: Break[] = [
  { code: 'argument-newly-required', tool: 'forecast', path: '/arguments/required/days', message: 'argument days is now required' },
  { code: 'tool-removed', tool: 'reset', path: '', message: 'tool reset is gone' },
  { code: 'field-no-longer-always-present', tool: 'forecast', path: '/returns/properties/low', message: 'low may be absent' },
  { code: 'event-removed', event: 'alert', path: '', message: 'event alert is gone' },
];

describe('formatBreaksText', () => {
  it('groups by tool or event in order of appearance, one line per break, then a summary', () => {
    expect(formatBreaksText(sample).split('\n')).toEqual([
      'tool forecast',
      '  argument-newly-required         argument days is now required  /arguments/required/days',
      '  field-no-longer-always-present  low may be absent  /returns/properties/low',
      'tool reset',
      '  tool-removed                    tool reset is gone',
      'event alert',
      '  event-removed                   event alert is gone',
      '',
      '4 breaking changes in 2 tools and 1 event',
    ]);
  });

  it('says so when there is nothing', () => {
    expect(formatBreaksText([])).toBe('No breaking changes.');
  });

  it("adds a note after a group's heading when asked, dimmed", () => {
    const notes = new Map([
      ['forecast', 'last used today'],
      ['reset', undefined],
    ]);
    const text = formatBreaksText(sample, tagged, {
      note: (items) => (items[0]!.tool === undefined ? 'never used' : notes.get(items[0]!.tool)),
    });
    expect(text.split('\n').filter((l) => l.startsWith('<b>'))).toEqual([
      '<b>tool forecast</b>  <dim>(last used today)</dim>',
      '<b>tool reset</b>',
      '<b>event alert</b>  <dim>(never used)</dim>',
      '<b>4 breaking changes in 2 tools and 1 event</b>',
    ]);
  });

  it('keeps each break on one line and counts one break in the singular', () => {
    const text = formatBreaksText([{ code: 'tool-removed', tool: 't', path: '', message: 'gone\nfor good' }]);
    expect(text.split('\n')).toEqual(['tool t', '  tool-removed  gone for good', '', '1 breaking change in 1 tool']);
  });

  it('colours headings, codes and paths', () => {
    const text = formatBreaksText(sample.slice(0, 1), tagged);
    expect(text).toContain('<b>tool forecast</b>');
    expect(text).toContain('<red>argument-newly-required</red>');
    expect(text).toContain('<dim>/arguments/required/days</dim>');
  });
});

describe('formatBreaksJson', () => {
  it('is the array of break objects', () => {
    expect(JSON.parse(formatBreaksJson(sample))).toEqual(sample);
    expect(JSON.parse(formatBreaksJson([]))).toEqual([]);
  });
});

describe('formatBreaksGithub', () => {
  it('prints one ::error annotation per break with a title naming the code and the subject', () => {
    expect(formatBreaksGithub(sample.slice(0, 2)).split('\n')).toEqual([
      '::error title=argument-newly-required in tool forecast::argument days is now required (at /arguments/required/days)',
      '::error title=tool-removed in tool reset::tool reset is gone',
    ]);
  });

  it('escapes %, CR and LF in messages, and also : and , in properties', () => {
    const nasty: Break = { code: 'type-changed', tool: 'a,b:c', path: '/x', message: '100% sure\r\nreally: yes, no' };
    expect(formatBreaksGithub([nasty])).toBe('::error title=type-changed in tool a%2Cb%3Ac::100%25 sure%0D%0Areally: yes, no (at /x)');
  });

  it('annotates nothing when there is nothing', () => {
    expect(formatBreaksGithub([])).not.toContain('::');
  });
});

describe('formatBreaksMarkdown', () => {
  it('is a summary line and a table, one row per break', () => {
    expect(formatBreaksMarkdown(sample.slice(1, 2).concat(sample[3]!)).split('\n')).toEqual([
      '**2 breaking changes**',
      '',
      '| Concerns | Break | Where | What |',
      '| --- | --- | --- | --- |',
      '| tool `reset` | `tool-removed` |  | tool reset is gone |',
      '| event `alert` | `event-removed` |  | event alert is gone |',
    ]);
  });

  it('escapes pipes, newlines, markup and backticks so each break stays one row of four cells', () => {
    const nasty: Break = { code: 'type-changed', tool: 'a`b', path: '/p|q', message: 'x | y\n<b>z</b> & w' };
    const row = formatBreaksMarkdown([nasty]).split('\n')[4];
    expect(row).toBe('| tool `` a`b `` | `type-changed` | `/p\\|q` | x \\| y &lt;b&gt;z&lt;/b&gt; &amp; w |');
    // Four cells: the unescaped pipes are exactly the five borders.
    expect(row!.split(/(?<!\\)\|/).length).toBe(6);
  });

  it('leaves markup characters alone inside the code spans of a message, where entities would print as typed', () => {
    const named: Break = {
      code: 'type-changed',
      tool: 't',
      path: '/arguments/properties/a<b&c',
      message: 'argument `a<b&c|d` of tool `t` may be <null> & more',
    };
    const row = formatBreaksMarkdown([named]).split('\n')[4];
    expect(row).toBe(
      '| tool `t` | `type-changed` | `/arguments/properties/a<b&c` | argument `a<b&c\\|d` of tool `t` may be &lt;null&gt; &amp; more |',
    );
  });

  it('says so when there is nothing', () => {
    expect(formatBreaksMarkdown([])).toBe('**No breaking changes.**');
  });
});

describe('effect breaks in every format', () => {
  const tool = (name: string, effect: ToolSpec['effect']): ToolSpec => ({ name, description: '', arguments: { type: 'object' }, effect });
  const manifest = (tools: ToolSpec[]): ManifestData => ({
    abi_version: 1,
    version: '',
    description: '',
    homepage: '',
    repository: '',
    readme: '',
    usage: '',
    tools,
    events: [],
    deps: { programs: [], syscalls: {}, secrets: [] },
  });
  const found = breaks(
    manifest([tool('notify', { kind: 'none' }), tool('order', { kind: 'external_write', retry: 'idempotency_key' })]),
    manifest([tool('notify', { kind: 'external_write', retry: 'none' }), tool('order', { kind: 'external_write', retry: 'none' })]),
  );

  it('carries effect-now-writes and retry-weakened with their tool and place', () => {
    expect(JSON.parse(formatBreaksJson(found)).map((b: Break) => [b.code, b.tool, b.path])).toEqual([
      ['effect-now-writes', 'notify', '/effect'],
      ['retry-weakened', 'order', '/effect/retry'],
    ]);
    for (const text of [formatBreaksText(found), formatBreaksGithub(found), formatBreaksMarkdown(found)]) {
      expect(text).toContain('effect-now-writes');
      expect(text).toContain('retry-weakened');
    }
    expect(
      formatBreaksGithub(found)
        .split('\n')
        .filter((l) => l.startsWith('::error')),
    ).toHaveLength(2);
  });
});

describe('content breaks in every format', () => {
  const manifest = (content: ToolSpec['content']): ManifestData => ({
    abi_version: 1,
    version: '',
    description: '',
    homepage: '',
    repository: '',
    readme: '',
    usage: '',
    tools: [{ name: 'draw', description: '', arguments: { type: 'object' }, content }],
    events: [],
    deps: { programs: [], syscalls: {}, secrets: [] },
  });
  const found = breaks(manifest(['image', 'text']), manifest(['text']));

  it('carries content-removed with its tool and place', () => {
    expect(JSON.parse(formatBreaksJson(found)).map((b: Break) => [b.code, b.tool, b.path])).toEqual([
      ['content-removed', 'draw', '/content'],
    ]);
    for (const text of [formatBreaksText(found), formatBreaksGithub(found), formatBreaksMarkdown(found)]) {
      expect(text).toContain('content-removed');
      expect(text).toContain('image');
    }
  });
});

describe('prompt and resource breaks in every format', () => {
  const manifest = (parts: Partial<ManifestData>): ManifestData => ({
    abi_version: 1,
    version: '',
    description: '',
    homepage: '',
    repository: '',
    readme: '',
    usage: '',
    tools: [],
    events: [],
    deps: { programs: [], syscalls: {}, secrets: [] },
    ...parts,
  });
  const found = breaks(
    manifest({
      prompts: [
        { name: 'greet', description: '', arguments: [{ name: 'who', description: '' }] },
        { name: 'gone', description: '', arguments: [] },
      ],
      resource_templates: [{ path: 'items/{id}', name: 'Item', description: '' }],
    }),
    manifest({ prompts: [{ name: 'greet', description: '', arguments: [{ name: 'who', description: '', required: true }] }] }),
  );

  it('carries prompt-argument-required, prompt-removed and resource-removed with what they concern', () => {
    expect(JSON.parse(formatBreaksJson(found)).map((b: Break) => [b.code, b.prompt ?? b.resource, b.path])).toEqual([
      ['prompt-argument-required', 'greet', '/arguments/0'],
      ['prompt-removed', 'gone', ''],
      ['resource-removed', 'items/{id}', ''],
    ]);
    for (const text of [formatBreaksText(found), formatBreaksGithub(found), formatBreaksMarkdown(found)]) {
      for (const code of ['prompt-argument-required', 'prompt-removed', 'resource-removed']) expect(text).toContain(code);
      expect(text).toMatch(/prompt `?greet/);
      expect(text).toMatch(/resource `?items\/\{id\}/);
    }
  });
});
