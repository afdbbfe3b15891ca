import { ManifestError, type ManifestErrorCode } from './errors.js';
import type { ManifestData } from './types.js';

/** The path the host serves a harness's usage at (`berm://{harness}/usage`); a program may not declare it. */
export const USAGE_PATH = 'usage';

/** A URI path character (RFC 3986 `pchar` less `%`) or a percent-encoded octet. */
const PCHAR = "(?:[A-Za-z0-9\\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})";
const SEGMENT = `${PCHAR}+`;
const PATH = new RegExp(`^${SEGMENT}(?:/${SEGMENT})*$`);
const VARIABLE = /^[A-Za-z0-9_]+$/;

/** One piece of a parsed template: a literal run, or a variable. */
export type TemplatePart = { literal: string } | { variable: string };

/** Whether `path` is a resource path: URI segments, none empty, no leading or trailing slash. */
export function isResourcePath(path: string): boolean {
  return PATH.test(path);
}

/**
 * Parses an RFC 6570 level-1 template (`template/{id}/data`): literals of URI path characters and
 * `{name}` expressions, at least one, each naming one variable once, never two side by side (which no
 * URI could be split between). Answers the reason it is not one as a string.
 */
export function parseTemplate(path: string): TemplatePart[] | string {
  const parts: TemplatePart[] = [];
  const seen = new Set<string>();
  let at = 0;
  while (at < path.length) {
    const open = path.indexOf('{', at);
    const literal = open < 0 ? path.slice(at) : path.slice(at, open);
    if (literal.includes('}')) return `"}" at index ${at + literal.indexOf('}')} closes no expression`;
    if (literal !== '') parts.push({ literal });
    if (open < 0) break;
    const close = path.indexOf('}', open);
    if (close < 0) return `the expression at index ${open} is not closed`;
    const name = path.slice(open + 1, close);
    if (!VARIABLE.test(name)) {
      return `expression {${name}} at index ${open} is not a level-1 variable (letters, digits and _; no operator, list or modifier)`;
    }
    if (seen.has(name)) return `variable ${name} appears twice`;
    if (parts.at(-1) !== undefined && 'variable' in parts.at(-1)!) return `{${name}} follows another expression with nothing between them`;
    seen.add(name);
    parts.push({ variable: name });
    at = close + 1;
  }
  if (seen.size === 0) return 'it has no {variable}; declare a fixed path under "resources"';
  // What the variables stand for must leave a valid path once expanded: check it with one in each.
  const sample = parts.map((p) => ('literal' in p ? p.literal : 'x')).join('');
  if (!isResourcePath(sample)) return 'its literal parts are not URI path segments (no empty segment, no leading or trailing "/")';
  return parts;
}

/** The variables of a parsed template, in order. */
export function templateVariables(parts: readonly TemplatePart[]): string[] {
  return parts.flatMap((p) => ('variable' in p ? [p.variable] : []));
}

/**
 * The variables `path` gives `parts`, percent-decoded, or undefined when it does not match. A variable
 * matches one or more characters within a segment, as a level-1 expansion (which encodes "/") writes it.
 */
export function matchTemplate(parts: readonly TemplatePart[], path: string): Record<string, string> | undefined {
  const source = parts.map((p) => ('literal' in p ? p.literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : '([^/]+)')).join('');
  const found = new RegExp(`^${source}$`).exec(path);
  if (found === null) return undefined;
  const names = templateVariables(parts);
  const out: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    try {
      out[names[i]!] = decodeURIComponent(found[i + 1]!);
    } catch {
      return undefined;
    }
  }
  return out;
}

/**
 * The checks of resources and templates JSON Schema cannot express, over a manifest the schema
 * accepted: each path is one the host can serve (a template a level-1 template, naming the variables
 * it completes), none is the usage resource's, none is declared twice.
 */
export function checkResources(data: ManifestData): void {
  const fail = (code: ManifestErrorCode, path: string, problem: string): never => {
    throw new ManifestError(code, `invalid manifest at ${path}: ${problem}`, { path });
  };
  const seen = new Map<string, string>();
  const claim = (path: string, at: string): void => {
    const first = seen.get(path);
    if (first !== undefined) fail('invalid-manifest', at, `resource path "${path}" is already declared by ${first}`);
    seen.set(path, at);
  };
  (data.resources ?? []).forEach((resource, index) => {
    const at = `/resources/${index}/path`;
    if (resource.path === USAGE_PATH) {
      fail('resource-path-reserved', at, `resource path "usage" is where the host serves the harness's usage; choose another path`);
    }
    if (!isResourcePath(resource.path)) {
      fail(
        'resource-path-invalid',
        at,
        `resource path ${JSON.stringify(resource.path)} is not a relative URI path; use segments of letters, digits and -._~!$&'()*+,;=:@ (or %XX) joined by "/"`,
      );
    }
    claim(resource.path, at);
  });
  (data.resource_templates ?? []).forEach((template, index) => {
    const at = `/resource_templates/${index}`;
    const parsed = parseTemplate(template.path);
    if (typeof parsed === 'string') {
      return fail(
        'resource-template-invalid',
        `${at}/path`,
        `${JSON.stringify(template.path)} is not an RFC 6570 level-1 template: ${parsed}`,
      );
    }
    const parts = parsed;
    claim(template.path, `${at}/path`);
    const variables = templateVariables(parts);
    (template.complete ?? []).forEach((name, i) => {
      if (!variables.includes(name)) {
        fail(
          'resource-template-invalid',
          `${at}/complete/${i}`,
          `template ${JSON.stringify(template.path)} completes "${name}", which is not one of its variables (${variables.join(', ')})`,
        );
      }
    });
  });
}
