/**
 * The MCP requests over the harnesses' prompts, resources and completions, for both generations:
 * `prompts/list`, `prompts/get`, `resources/templates/list`, `resources/subscribe` and `unsubscribe` (2025
 * sessions), `completion/complete`, and what `resources/list` and `resources/read` add to the usage
 * resources. Each runs its harness's export on the runtime's workers as a tool runs, for the request's
 * principal: a harness it may not call shows nothing and answers as one not deployed.
 */
import type { PromptSpec } from '@berm/manifest';
import { COMPLETE_EXPORT, promptExport, RESOURCE_READ_EXPORT } from '@berm/protocol';
import {
  type CompleteResult,
  type GetPromptResult,
  type Prompt,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
  type ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/server';
import type { Caller, CallOutcome } from '../runtime/index.js';
import type { ToolCatalog } from './catalog.js';
import { type HarnessSurface, parseResourceUri, resolvePath, type Resolved, type ResourceUris, resourceUri } from './surface.js';

/** MCP bounds a completion's values at 100. */
export const MAX_COMPLETIONS = 100;

/** What the handlers need of the daemon. */
export interface SurfaceCore {
  catalog: ToolCatalog;
  resourceUris: ResourceUris;
  runExport(
    harness: string,
    exportName: string,
    request: unknown,
    options: { caller?: Caller; signal?: AbortSignal },
  ): Promise<CallOutcome>;
}

/** The JSON-RPC code of a guest's failure to render, read or complete: the answer says what failed and carries bermd's code. */
const GUEST_FAILED = ProtocolErrorCode.InternalError;

function visible(core: SurfaceCore, harness: string, caller: Caller | undefined): HarnessSurface | undefined {
  if (caller !== undefined && !caller.mayCall(harness)) return undefined;
  return core.catalog.surface(harness);
}

function guestValue(outcome: CallOutcome, what: string): unknown {
  if ('ok' in outcome) return outcome.ok;
  throw new ProtocolError(GUEST_FAILED, `${what} failed: ${outcome.error.message}`, { code: outcome.error.code });
}

function badResult(what: string, problem: string): ProtocolError {
  return new ProtocolError(GUEST_FAILED, `${what} answered ${problem}`, { code: 'bad-result' });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function listPrompts(core: SurfaceCore, caller: Caller | undefined): Prompt[] {
  const out: Prompt[] = [];
  for (const harness of core.catalog.harnessesFor(caller)) {
    for (const prompt of core.catalog.surface(harness)?.prompts ?? []) {
      out.push({
        name: core.catalog.fullName(harness, prompt.name),
        description: prompt.description,
        arguments: prompt.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required === true })),
        _meta: { 'berm/harness': harness, 'berm/prompt': prompt.name },
      });
    }
  }
  return out;
}

/** The harness and prompt a listed prompt name stands for, among the harnesses `caller` may call. */
function findPrompt(core: SurfaceCore, name: string, caller: Caller | undefined): { harness: string; prompt: PromptSpec } | undefined {
  const { separator } = core.catalog;
  for (const harness of core.catalog.harnessesNamedBy(name)) {
    const own = name.slice(harness.length + separator.length);
    const prompt = visible(core, harness, caller)?.prompts.find((p) => p.name === own);
    if (prompt !== undefined) return { harness, prompt };
  }
  return undefined;
}

export async function getPrompt(
  core: SurfaceCore,
  name: string,
  args: Record<string, string> | undefined,
  caller: Caller | undefined,
  signal: AbortSignal,
): Promise<GetPromptResult> {
  const found = findPrompt(core, name, caller);
  if (found === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`, { name });
  const given = args ?? {};
  const missing = found.prompt.arguments.filter((a) => a.required === true && typeof given[a.name] !== 'string').map((a) => a.name);
  if (missing.length > 0) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `prompt ${name} needs the argument${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; give ${missing.length > 1 ? 'them' : 'it'} in arguments`,
      { name, missing },
    );
  }
  const what = `prompt ${name}`;
  const value = guestValue(
    await core.runExport(found.harness, promptExport(found.prompt.name), { arguments: given }, { caller, signal }),
    what,
  );
  if (!isObject(value) || !Array.isArray(value.messages)) return Promise.reject(badResult(what, 'no {"messages": [...]}'));
  for (const [i, message] of value.messages.entries()) {
    if (!isObject(message) || (message.role !== 'user' && message.role !== 'assistant') || !isObject(message.content)) {
      throw badResult(what, `message ${i} that is not {"role": "user"|"assistant", "content": {...}}`);
    }
    if (typeof message.content.type !== 'string') throw badResult(what, `message ${i} whose content has no "type"`);
  }
  const out: GetPromptResult = { messages: value.messages as GetPromptResult['messages'] };
  if (typeof value.description === 'string') out.description = value.description;
  return out;
}

export function listResources(core: SurfaceCore, caller: Caller | undefined): Resource[] {
  const out: Resource[] = [];
  for (const harness of core.catalog.harnessesFor(caller)) {
    for (const r of core.catalog.surface(harness)?.resources ?? []) {
      const resource: Resource = { uri: resourceUri(harness, r.path, core.resourceUris), name: r.name, description: r.description };
      if (r.mimeType !== undefined) resource.mimeType = r.mimeType;
      out.push(resource);
    }
  }
  return out;
}

export function listTemplates(core: SurfaceCore, caller: Caller | undefined): ResourceTemplate[] {
  const out: ResourceTemplate[] = [];
  for (const harness of core.catalog.harnessesFor(caller)) {
    for (const { spec } of core.catalog.surface(harness)?.templates ?? []) {
      const template: ResourceTemplate = {
        uriTemplate: resourceUri(harness, spec.path, core.resourceUris),
        name: spec.name,
        description: spec.description,
      };
      if (spec.mimeType !== undefined) template.mimeType = spec.mimeType;
      out.push(template);
    }
  }
  return out;
}

/** The declared resource or template instance a URI names, for `caller`; throws invalid params with the URI when there is none. */
export function resolveUri(
  core: SurfaceCore,
  uri: string,
  caller: Caller | undefined,
): { harness: string; path: string; resolved: Resolved } {
  const named = parseResourceUri(uri);
  const surface = named === undefined ? undefined : visible(core, named.harness, caller);
  const resolved = surface === undefined ? undefined : resolvePath(surface, named!.path);
  if (resolved === undefined) throw new ResourceNotFoundError(uri);
  return { harness: named!.harness, path: named!.path, resolved };
}

export async function readResource(
  core: SurfaceCore,
  uri: string,
  caller: Caller | undefined,
  signal: AbortSignal,
): Promise<ReadResourceResult> {
  const { harness, path, resolved } = resolveUri(core, uri, caller);
  const request: Record<string, unknown> = { path };
  if (resolved.kind === 'template') {
    request.template = resolved.spec.path;
    request.variables = resolved.variables;
  }
  const what = `resource ${uri}`;
  const value = guestValue(await core.runExport(harness, RESOURCE_READ_EXPORT, request, { caller, signal }), what);
  if (!isObject(value) || !Array.isArray(value.contents)) throw badResult(what, 'no {"contents": [...]}');
  const contents = value.contents.map((content, i) => {
    if (!isObject(content) || (typeof content.text !== 'string') === (typeof content.blob !== 'string')) {
      throw badResult(what, `content ${i} that is not {"text": string} or {"blob": base64}`);
    }
    const mimeType = typeof content.mimeType === 'string' ? content.mimeType : resolved.spec.mimeType;
    const out: Record<string, unknown> = { uri };
    if (mimeType !== undefined) out.mimeType = mimeType;
    if (typeof content.text === 'string') out.text = content.text;
    else out.blob = content.blob;
    if (isObject(content._meta)) out._meta = content._meta;
    return out;
  });
  return { contents: contents as ReadResourceResult['contents'] };
}

const EMPTY: CompleteResult = { completion: { values: [], total: 0, hasMore: false } };

export async function complete(
  core: SurfaceCore,
  params: {
    ref: { type: string; name?: string; uri?: string };
    argument: { name: string; value: string };
    context?: { arguments?: Record<string, string> };
  },
  caller: Caller | undefined,
  signal: AbortSignal,
): Promise<CompleteResult> {
  const { ref, argument } = params;
  let harness: string;
  let guestRef: Record<string, string>;
  if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
    const found = findPrompt(core, ref.name, caller);
    const declared = found?.prompt.arguments.find((a) => a.name === argument.name);
    if (found === undefined || declared?.complete !== true) return EMPTY;
    harness = found.harness;
    guestRef = { type: 'prompt', name: found.prompt.name };
  } else if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
    const named = parseResourceUri(ref.uri);
    const surface = named === undefined ? undefined : visible(core, named.harness, caller);
    const template = surface?.templates.find((t) => t.spec.path === named!.path);
    if (template === undefined || !(template.spec.complete ?? []).includes(argument.name)) return EMPTY;
    harness = named!.harness;
    guestRef = { type: 'resource', path: template.spec.path };
  } else return EMPTY;
  const request: Record<string, unknown> = { ref: guestRef, argument: { name: argument.name, value: argument.value } };
  if (params.context?.arguments !== undefined) request.context = { arguments: params.context.arguments };
  const what = `completion of ${argument.name}`;
  const value = guestValue(await core.runExport(harness, COMPLETE_EXPORT, request, { caller, signal }), what);
  if (!isObject(value) || !Array.isArray(value.values) || !value.values.every((v) => typeof v === 'string')) {
    throw badResult(what, 'no {"values": [strings]}');
  }
  const values = value.values.slice(0, MAX_COMPLETIONS) as string[];
  const completion: CompleteResult['completion'] = { values };
  if (typeof value.total === 'number') completion.total = value.total;
  const cut = value.values.length > MAX_COMPLETIONS;
  if (typeof value.hasMore === 'boolean' || cut) completion.hasMore = cut || value.hasMore === true;
  return { completion };
}
