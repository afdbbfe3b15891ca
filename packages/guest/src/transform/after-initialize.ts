/**
 * The transform's afterInitialize, once every type resolves: reports what afterParse found wrong with
 * the tools' declarations, and renders each tool, prompt, resource and `@event` class (render.ts,
 * prompts.ts, surface.ts).
 */
import type { Program } from 'assemblyscript';
import type { PromptSpec, ToolSpec } from '@berm/manifest';
import type { ParsedHarness } from './after-parse.js';
import { type Diagnostics, nameRange } from './diagnostics.js';
import { checkToolEffects, TagPlaces } from './effects.js';
import { renderPrompt } from './prompts.js';
import { type EventInfo, renderEvents, renderTool } from './render.js';
import { SchemaRenderer } from './schema.js';
import { type RenderedSurface, renderSurface } from './surface.js';
import { glueExport, promptGlueExport } from './tools.js';

/** What afterInitialize rendered: the tools that could be, and the events. */
export interface RenderedHarness {
  tools: ToolSpec[];
  events: EventInfo[];
  prompts: PromptSpec[];
  surface: RenderedSurface;
}

const NO_SURFACE: RenderedSurface = { resources: [], templates: [], read: false, complete: false };

export function renderHarness(program: Program, parsed: ParsedHarness, diagnostics: Diagnostics): RenderedHarness {
  for (const problem of parsed.toolProblems) diagnostics.error(nameRange(problem.node), problem.message);
  const rendered: RenderedHarness = { tools: [], events: [], prompts: [], surface: NO_SURFACE };
  if (parsed.entry === null) return rendered;
  const file = program.filesByName.get(parsed.entry.internalPath);
  if (file === undefined) return rendered;
  const renderer = new SchemaRenderer(program);
  const places: TagPlaces[] = [];
  for (const tool of parsed.tools) {
    if (tool.kind === 'resource' || tool.kind === 'template' || tool.kind === 'complete') continue;
    if (tool.kind === 'prompt') {
      const prompt = renderPrompt(program, file, renderer, tool, diagnostics);
      if (prompt !== undefined) rendered.prompts.push(prompt);
      else file.exports?.delete(promptGlueExport(tool.name));
      continue;
    }
    const at = new TagPlaces(tool.decl.range.source, tool.decl.range.start, nameRange(tool.decl));
    const spec = renderTool(program, file, renderer, tool, diagnostics, at);
    if (spec !== undefined) {
      rendered.tools.push(spec);
      places.push(at);
    }
    // A tool that cannot be rendered is not compiled into the ABI: its glue would only add errors.
    else file.exports?.delete(glueExport(tool.name));
  }
  rendered.surface = renderSurface(program, file, renderer, parsed.tools, rendered.prompts, diagnostics);
  checkToolEffects(rendered.tools, places, diagnostics);
  rendered.events = renderEvents(program, renderer, diagnostics);
  return rendered;
}
