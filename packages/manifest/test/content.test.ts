import { describe, expect, it } from 'vitest';
import { breaks, Manifest, type ToolSpec } from '@berm/manifest';
import { manifest, tool } from './breaks/support.js';
import { expectCode, manifestError } from './support.js';

function withContent(content: unknown) {
  return { abi_version: 1, tools: [{ name: 'draw', arguments: { type: 'object' }, content }] };
}

function change(old: Partial<ToolSpec>, next: Partial<ToolSpec>) {
  return breaks(manifest({ tools: [tool('draw', old)] }), manifest({ tools: [tool('draw', next)] }));
}

describe("a tool's content kinds: what the reader accepts", () => {
  it('keeps the kinds a tool declares, and reads a tool without them as declaring none', () => {
    expect(Manifest.fromJSON(withContent(['image', 'resource'])).data.tools[0]!.content).toEqual(['image', 'resource']);
    expect(
      Manifest.fromJSON({ abi_version: 1, tools: [{ name: 'draw', arguments: { type: 'object' } }] }).data.tools[0],
    ).not.toHaveProperty('content');
  });

  it('refuses a kind MCP does not define, a repeated kind and a content that is not a list, at the member', () => {
    for (const content of [['video'], ['image', 'image'], 'image']) {
      const error = manifestError(() => Manifest.fromJSON(withContent(content)));
      expectCode(error, 'invalid-manifest');
      expect(error.path).toMatch(/^\/tools\/0\/content/);
    }
  });
});

describe('breaks: content kinds', () => {
  it('a kind no longer declared is content-removed, one break per kind', () => {
    expect(change({ content: ['image', 'audio', 'text'] }, { content: ['text'] })).toEqual([
      {
        code: 'content-removed',
        tool: 'draw',
        path: '/content',
        message: 'tool `draw` no longer declares content of kind `image`: a caller reading it gets none',
      },
      {
        code: 'content-removed',
        tool: 'draw',
        path: '/content',
        message: 'tool `draw` no longer declares content of kind `audio`: a caller reading it gets none',
      },
    ]);
    expect(change({ content: ['resource'] }, {}).map((b) => b.code)).toEqual(['content-removed']);
  });

  it('a kind added, or content declared where there was none, breaks nothing', () => {
    expect(change({ content: ['image'] }, { content: ['image', 'audio'] })).toEqual([]);
    expect(change({}, { content: ['resource_link'] })).toEqual([]);
  });
});
