/**
 * Doc comments and their tags. The AssemblyScript parser drops comments, so a declaration's doc
 * comment is read back from its source text: the last `/** ... *\/` block before the declaration,
 * with nothing but whitespace, decorators and modifiers between the two.
 */

export interface Doc {
  /** The text before any tag, its lines joined as written (paragraphs kept). */
  text: string;
  /** The tags, by name without the `@`, each with the text that follows it. */
  tags: Map<string, string>;
}

const EMPTY: Doc = { text: '', tags: new Map() };

/** What may stand between a doc comment and the declaration it documents. */
const BETWEEN =
  /^(?:\s|@[A-Za-z_$][\w$]*(?:\([^)]*\))?|export\b|declare\b|abstract\b|readonly\b|public\b|private\b|protected\b|static\b|default\b)*$/;

/** The doc comment that ends before `start` in `text`, parsed; empty when there is none. */
export function docBefore(text: string, start: number, floor = 0): Doc {
  const end = text.lastIndexOf('*/', start);
  if (end < floor || end < 0) return EMPTY;
  const open = text.lastIndexOf('/**', end);
  if (open < floor || open < 0) return EMPTY;
  if (!BETWEEN.test(text.slice(end + 2, start))) return EMPTY;
  return parseDoc(text.slice(open + 3, end));
}

/** The body of a doc comment (between `/**` and `*\/`) as text and tags. */
export function parseDoc(body: string): Doc {
  const lines = body.split(/\r?\n/).map((line) => line.replace(/^\s*\*(?!\/) ?/, '').replace(/\s+$/, ''));
  const text: string[] = [];
  const tags = new Map<string, string>();
  let current: string | undefined;
  for (const line of lines) {
    const tag = /^\s*@([A-Za-z][\w-]*)\s*(.*)$/.exec(line);
    if (tag) {
      current = tag[1]!;
      tags.set(current, tag[2]!.trim());
    } else if (current !== undefined) {
      const more = line.trim();
      if (more) tags.set(current, `${tags.get(current)} ${more}`.trim());
    } else {
      text.push(line);
    }
  }
  // Trim blank lines at either end and the indentation common to the lines.
  while (text.length > 0 && text[0]!.trim() === '') text.shift();
  while (text.length > 0 && text[text.length - 1]!.trim() === '') text.pop();
  const indent = Math.min(...text.filter((l) => l.trim() !== '').map((l) => /^\s*/.exec(l)![0].length));
  return { text: text.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n'), tags };
}
