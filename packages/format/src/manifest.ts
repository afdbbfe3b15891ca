import { ABI_VERSION, effectOf, reachesOutside, type EventSpec, type ManifestData, type ToolSpec } from '@berm/manifest';
import { plain, type Paint } from './paint.js';
import { printable, printableDeep } from './printable.js';
import { renderArguments, renderSchema } from './schema.js';
import { renderSurface } from './surface.js';

export interface ManifestView {
  /** What the manifest is called on the name line: the image's file name. */
  name: string;
  paint?: Paint;
  /**
   * The programs deployed on the daemon, when one was asked: each declared program not in
   * the set is marked. Undefined when no daemon was asked, and nothing is marked.
   */
  deployed?: ReadonlySet<string>;
}

/** The human view of `crab inspect`: what an image declares, one line per tool and event. */
export function renderManifest(data: ManifestData, view: ManifestView): string {
  const paint = view.paint ?? plain;
  const manifest = printableDeep(data);
  const out: string[] = [];

  out.push(paint.bold(printable(view.name)) + (manifest.version ? ` ${manifest.version}` : ''));
  if (manifest.abi_version !== ABI_VERSION) {
    out.push(paint.yellow(`warning: abi_version is ${manifest.abi_version}, not ${ABI_VERSION}: deploy will refuse this image`));
  }
  if (manifest.description) out.push(...manifest.description.split('\n'));
  const about: [string, string][] = [];
  if (manifest.homepage) about.push(['homepage', manifest.homepage]);
  if (manifest.repository) about.push(['repository', manifest.repository]);
  if (manifest.readme) about.push(['readme', `${lineCount(manifest.readme)} (--json has it)`]);
  out.push(...table(about, paint, ''));

  if (manifest.usage) {
    out.push('', paint.bold('Usage'), ...indent(manifest.usage.split('\n'), '  '));
  }

  out.push('', heading('Tools', manifest.tools.length, paint));
  const outside = reachesOutside(manifest);
  for (const tool of manifest.tools) out.push(...renderTool(tool, paint, outside));

  out.push('', heading('Events', manifest.events.length, paint));
  for (const event of manifest.events) out.push(...renderEvent(event, paint));
  out.push(...renderSurface(manifest, paint, (title, count) => heading(title, count, paint)));

  out.push('', paint.bold('Deps'));
  const deps = renderDeps(manifest, view.deployed, paint);
  out.push(...(deps.length ? deps : ['  none']));
  return out.join('\n');
}

function heading(title: string, count: number, paint: Paint): string {
  return `${paint.bold(title)}${count === 0 ? ': none' : ` (${count})`}`;
}

function renderTool(tool: ToolSpec, paint: Paint, outside: boolean): string[] {
  const returns = tool.returns === undefined ? '' : ` ${paint.dim('->')} ${renderSchema(tool.returns)}`;
  const marks = [
    tool.query ? paint.green('query') : '',
    tool.deprecated ? paint.yellow('deprecated') : '',
    effectMark(tool, paint, outside),
    // The content blocks it may answer beside its value (a caller reading an image looks for it here).
    tool.content !== undefined && tool.content.length > 0 ? paint.dim(`content ${tool.content.join(',')}`) : '',
  ].filter(Boolean);
  const line = `  ${paint.bold(tool.name)}(${renderArguments(tool.arguments)})${returns}${marks.length ? `  ${marks.join('  ')}` : ''}`;
  return [line, ...description(tool.description, paint)];
}

/**
 * A declared effect as written; an undeclared one only where it matters, on a tool that is not a query
 * of a program that reaches outside (`bermd --require-effects` refuses it).
 */
function effectMark(tool: ToolSpec, paint: Paint, outside: boolean): string {
  const effect = tool.effect;
  if (effect === undefined) return outside && effectOf(tool) === undefined ? paint.yellow('effect undeclared') : '';
  if (effect.kind === 'none') return paint.green('effect none');
  const parts = [`retry ${effect.retry}`];
  if (effect.reconcile !== undefined) parts.push(`reconcile ${effect.reconcile}`);
  if (effect.compensation !== undefined) parts.push(`compensation ${effect.compensation}`);
  return `${paint.yellow('writes outside')} ${paint.dim(`(${parts.join(', ')})`)}`;
}

function renderEvent(event: EventSpec, paint: Paint): string[] {
  const fields = renderArguments(event.fields);
  const marks = event.deprecated ? `  ${paint.yellow('deprecated')}` : '';
  return [`  ${paint.bold(event.name)}{${fields}}${marks}`, ...description(event.description, paint)];
}

function description(text: string, paint: Paint): string[] {
  return text ? indent(text.split('\n'), '      ').map((l) => paint.dim(l)) : [];
}

function renderDeps(manifest: ManifestData, deployed: ReadonlySet<string> | undefined, paint: Paint): string[] {
  const deps = manifest.deps ?? { programs: [], syscalls: {}, secrets: [] };
  const rows: [string, string][] = [];
  const programs = (deps.programs ?? []).map((p) => (deployed && !deployed.has(p) ? `${p} ${paint.yellow('(not deployed)')}` : p));
  if (programs.length) rows.push(['programs', programs.join(', ')]);
  const syscalls = Object.entries(deps.syscalls ?? {});
  syscalls.forEach(([name, targets], i) => {
    rows.push([i === 0 ? 'syscalls' : '', targets.length ? `${name} ${paint.dim('->')} ${targets.join(', ')}` : name]);
  });
  if (deps.secrets?.length) rows.push(['secrets', deps.secrets.join(', ')]);
  return table(rows, paint, '  ');
}

/** Two columns, the first padded to its widest cell. */
function table(rows: [string, string][], paint: Paint, prefix: string): string[] {
  const width = Math.max(0, ...rows.map(([key]) => key.length));
  return rows.map(([key, value]) => `${prefix}${paint.dim(key.padEnd(width))}  ${value}`);
}

function indent(lines: string[], by: string): string[] {
  return lines.map((l) => (l ? by + l : l));
}

function lineCount(text: string): string {
  const n = text.replace(/\n$/, '').split('\n').length;
  return `${n} line${n === 1 ? '' : 's'}`;
}
