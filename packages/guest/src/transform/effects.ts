/**
 * A tool's effect contract from its doc tags: `@effect none` or `@effect external_write` with
 * `@retry idempotency_key|reconcile|none`, and optionally `@reconcile TOOL` and `@compensation TOOL`.
 * Each tag is checked alone where it is read (`effectOfTags`), then the references between the tools
 * once every tool is rendered (`checkToolEffects`), by the manifest library's own rules, so a build
 * refuses exactly what a deploy would, reported at the tag.
 */
import type { Range, Source } from 'assemblyscript';
import {
  checkEffects,
  EFFECT_RETRIES,
  type Effect,
  type EffectRetry,
  isManifestError,
  type ManifestData,
  type ToolSpec,
} from '@berm/manifest';
import type { Diagnostics } from './diagnostics.js';
import type { Doc } from './docs.js';

export const EFFECT_TAGS = ['effect', 'retry', 'reconcile', 'compensation'] as const;
type EffectTag = (typeof EFFECT_TAGS)[number];

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Where each tag of one tool's doc comment is written, to report a problem at it. */
export class TagPlaces {
  constructor(
    private readonly source: Source,
    /** Where the declaration starts; its doc comment ends before it. */
    private readonly declStart: number,
    private readonly fallback: Range,
  ) {}

  report(diagnostics: Diagnostics, tag: string, message: string): void {
    const text = this.source.text;
    const end = text.lastIndexOf('*/', this.declStart);
    const open = end < 0 ? -1 : text.lastIndexOf('/**', end);
    const found = open < 0 ? null : new RegExp(`@${tag}\\b`).exec(text.slice(open, end));
    if (found === null) diagnostics.error(this.fallback, message);
    else diagnostics.errorAt(this.source, open + found.index, found[0].length, message);
  }
}

/** The effect tool `tool`'s tags declare, or undefined (none declared, or a problem reported). */
export function effectOfTags(tool: string, doc: Doc, places: TagPlaces, diagnostics: Diagnostics): Effect | undefined {
  const tags = doc.tags;
  if (!EFFECT_TAGS.some((t) => tags.has(t))) return undefined;
  const fail = (tag: EffectTag, problem: string): undefined => {
    places.report(diagnostics, tag, `tool ${tool}: ${problem}`);
    return undefined;
  };
  const kind = tags.get('effect');
  if (kind === undefined) {
    const given = EFFECT_TAGS.find((t) => tags.has(t))!;
    return fail(given, `@${given} without @effect; add "@effect external_write" above it (or remove @${given})`);
  }
  if (kind === 'none') {
    for (const tag of ['retry', 'reconcile', 'compensation'] as const) {
      if (tags.has(tag))
        return fail(
          tag,
          `@${tag} describes an external write, and the tool declares "@effect none"; remove @${tag} or declare "@effect external_write"`,
        );
    }
    return { kind: 'none' };
  }
  if (kind !== 'external_write') return fail('effect', `@effect is "${kind}"; write "@effect none" or "@effect external_write"`);
  const retry = tags.get('retry');
  if (retry === undefined)
    return fail('effect', '"@effect external_write" needs a retry mode: add "@retry idempotency_key", "@retry reconcile" or "@retry none"');
  if (!(EFFECT_RETRIES as readonly string[]).includes(retry)) {
    return fail('retry', `@retry is "${retry}"; write one of ${EFFECT_RETRIES.map((r) => `"@retry ${r}"`).join(', ')}`);
  }
  const effect: Effect = { kind: 'external_write', retry: retry as EffectRetry };
  for (const tag of ['reconcile', 'compensation'] as const) {
    const name = tags.get(tag);
    if (name === undefined) continue;
    if (!NAME.test(name))
      return fail(
        tag,
        `@${tag} is "${name}"; it names one tool of this program, e.g. "@${tag} ${tag === 'reconcile' ? 'findOrder' : 'cancelOrder'}"`,
      );
    effect[tag] = name;
  }
  return effect;
}

/**
 * The references between the tools' effects, checked as a deploy checks them: the first problem is
 * reported at the tag it concerns, in the words of the manifest library's message.
 */
export function checkToolEffects(tools: ToolSpec[], places: TagPlaces[], diagnostics: Diagnostics): void {
  try {
    checkEffects({ tools } as ManifestData);
  } catch (e) {
    if (!isManifestError(e) || e.path === undefined) throw e;
    const [, , index, , member] = e.path.split('/');
    const tag = (member === 'kind' ? 'effect' : member) as EffectTag;
    const problem = e.message.replace(/^invalid manifest at \S+: /, '');
    places[Number(index)]!.report(diagnostics, EFFECT_TAGS.includes(tag) ? tag : 'effect', `${problem} (${e.code})`);
  }
}
