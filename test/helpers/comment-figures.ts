/** A comment's text on a line: after `//`, or a block comment's line (`/*`, ` *`). */
const COMMENT = /(?:^\s*(?:\/\*+|\*)(?!\/)|\/\/)(.*)$/;
/** Microseconds, a ratio against a baseline (`0.27×`, `2.3x`), or milliseconds said to be measured. */
const FIGURE = /\d\s?µs|\d(?:\.\d+)?\s?×|\d\.\d+x\b|\d-\d+x\b/;
const MEASURED_MS = /\b(?:measured|took|takes|cost)\b[^.]*\d(?:\.\d+)?\s?ms\b/;

/** The 1-based numbers of the lines of `source` whose comment carries a measured figure. */
export function commentFigures(source: string): number[] {
  const lines: number[] = [];
  source.split('\n').forEach((line, i) => {
    const comment = COMMENT.exec(line)?.[1];
    if (comment !== undefined && (FIGURE.test(comment) || MEASURED_MS.test(comment))) lines.push(i + 1);
  });
  return lines;
}
