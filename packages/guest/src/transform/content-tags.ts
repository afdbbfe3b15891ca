/**
 * A tool's content kinds from its doc tag: `@content text,image,resource` (commas or spaces between),
 * the kinds of MCP content block it may answer beside its value (docs/contract.md §6a). Each kind is
 * checked where the tag is written, so a build refuses what a deploy would, at the tag.
 */
import { CONTENT_KINDS, type ContentKind } from '@berm/manifest';
import type { Diagnostics } from './diagnostics.js';
import type { Doc } from './docs.js';
import type { TagPlaces } from './effects.js';

/** The kinds tool `tool`'s `@content` tag declares, or undefined (no tag, or a problem reported). */
export function contentOfTags(tool: string, doc: Doc, places: TagPlaces, diagnostics: Diagnostics): ContentKind[] | undefined {
  const tag = doc.tags.get('content');
  if (tag === undefined) return undefined;
  const fail = (problem: string): undefined => {
    places.report(diagnostics, 'content', `tool ${tool}: ${problem}`);
    return undefined;
  };
  const words = tag.split(/[\s,]+/).filter((w) => w !== '');
  const choices = CONTENT_KINDS.join(', ');
  if (words.length === 0)
    return fail(`@content names no kind; write the kinds the tool answers, e.g. "@content text,image" (of ${choices})`);
  const kinds: ContentKind[] = [];
  for (const word of words) {
    if (!(CONTENT_KINDS as readonly string[]).includes(word))
      return fail(`@content names "${word}", which is not a content kind; write kinds of ${choices}`);
    if (kinds.includes(word as ContentKind)) return fail(`@content names "${word}" twice; name each kind once`);
    kinds.push(word as ContentKind);
  }
  return kinds;
}
