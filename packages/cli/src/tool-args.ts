/**
 * A tool's arguments as `crab run` and `berm call` take them on the command line: one JSON object, or
 * `key=value` pairs, each value read by the type the tool's argument schema gives its key (a number
 * field's `3` is the number 3, an object's is JSON, anything else the text as typed). The tool's
 * validator, the runtime's or bermd's, then judges the arguments with `/mcp`'s words.
 */
import { CliError } from './failure.js';

type Schema = { type?: unknown; properties?: unknown };

/** The JSON types a property's schema allows: none known when it names none. */
function typesOf(schema: unknown): Set<string> {
  const type = (schema as Schema | undefined)?.type;
  const names = Array.isArray(type) ? type : [type];
  return new Set(names.filter((t): t is string => typeof t === 'string'));
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** `text` as the value of a property of `schema`: the JSON it reads as when that is a type the schema allows, else the text. */
function typed(key: string, text: string, schema: unknown): unknown {
  const types = typesOf(schema);
  const wantsJson = types.has('object') || types.has('array');
  if (types.size === 0 || (types.size === 1 && types.has('string'))) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    if (wantsJson && !types.has('string'))
      throw new CliError('usage', `${key}=${text}: ${key} is ${[...types].join(' or ')}, and the value is not JSON; give it as JSON`, {
        argument: key,
      });
    return text;
  }
  const type = jsonType(parsed);
  const allowed = types.has(type) || (type === 'integer' && types.has('number'));
  return allowed ? parsed : text;
}

/**
 * The arguments object from `words`: nothing (`{}`), one JSON object, or `key=value` pairs typed by
 * `schema` (the tool's `arguments`; undefined: every value is text).
 */
export function toolArguments(words: readonly string[], schema: unknown): Record<string, unknown> {
  if (words.length === 0) return {};
  const [first] = words;
  if (words.length === 1 && first!.trimStart().startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(first!);
    } catch (e) {
      throw new CliError('usage', `the arguments are not a JSON object: ${(e as Error).message}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new CliError('usage', 'the arguments are not a JSON object');
    return value as Record<string, unknown>;
  }
  const properties = (schema as Schema | undefined)?.properties;
  const out: Record<string, unknown> = {};
  for (const word of words) {
    const at = word.indexOf('=');
    if (at <= 0)
      throw new CliError('usage', `${word}: give the arguments as key=value pairs, or as one JSON object such as '{"key": "value"}'`, {
        argument: word,
      });
    const key = word.slice(0, at);
    if (Object.hasOwn(out, key)) throw new CliError('usage', `${key} is given twice`, { argument: key });
    const property = typeof properties === 'object' && properties !== null ? (properties as Record<string, unknown>)[key] : undefined;
    out[key] = typed(key, word.slice(at + 1), property);
  }
  return out;
}

/** Whether `words` need the tool's schema to be read (key=value pairs do). */
export function needsSchema(words: readonly string[]): boolean {
  return !(words.length === 0 || (words.length === 1 && words[0]!.trimStart().startsWith('{')));
}
