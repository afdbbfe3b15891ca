/** Relative link targets, without their anchor: `[text](target#anchor)`, images included. */
const LINK = /\]\(([^)\s]+)\)/g;
/** Inline code spans of one line. */
const SPAN = /`([^`\n]+)`/g;
/** A path: segments of file-name characters joined by `/`, with no glob in it. */
const PATH = /^[\w@-][\w@.-]*(?:\/[\w@.-]+)+\/?$/;
/** A segment in capitals (`NAME`, `DIR`) stands for what the reader chooses. */
const PLACEHOLDER = /(?:^|\/)[A-Z][A-Z_]+(?:[./]|$)/;

/**
 * The repository paths a Markdown text cites, in order of first mention: each relative link, and each
 * code span shaped like a path whose first segment `isEntry` accepts (an example path such as
 * `weather/build/weather.wasm` names no entry of the repository and is not a citation). A span starting
 * with `./` or `../` is an import specifier, and one with a capitalised segment a pattern: neither cites.
 */
export function citedPaths(markdown: string, isEntry: (first: string) => boolean): string[] {
  const cited = new Set<string>();
  for (const [, target] of markdown.matchAll(LINK)) {
    if (target === undefined || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    const file = target.split('#')[0]!;
    if (file !== '') cited.add(decodeURIComponent(file));
  }
  for (const [, span] of markdown.matchAll(SPAN)) {
    if (span === undefined || !PATH.test(span) || PLACEHOLDER.test(span)) continue;
    const first = span.split('/')[0]!;
    if (isEntry(first)) cited.add(span);
  }
  return [...cited];
}
