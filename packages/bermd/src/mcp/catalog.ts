/**
 * The deployed tool set as MCP lists it (spec §6): every tool of every harness under
 * `{harness}{separator}{tool}`, and each harness's usage as the resource `berm://{harness}/usage`.
 *
 * Dispatch never splits a name: it looks the whole name up in a map built from the deployed set, so a
 * separator that may occur inside a harness name (`_`, `-`) stays unambiguous. What keeps the map a
 * function is refusing, at deploy, a harness one of whose names another harness already answers to.
 *
 * The lists are answered for a caller: the tools and usage of the harnesses it may call. Each rebuild
 * notes which harnesses' listing changed, so that a list change is told only to those who see it.
 */
import { type JsonSchema, type ManifestData, standardSchema, type ToolSpec } from '@berm/manifest';
import { ASK_SYSCALLS, isHarnessName } from '@berm/protocol';
import type { Resource, Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import { BermdError } from '../errors.js';
import type { Caller } from '../runtime/index.js';
import { compileOutputCheck, type OutputCheck } from './output-check.js';
import { type HarnessSurface, NO_SURFACE, surfaceOf } from './surface.js';

/**
 * Whether a manifest's syscalls include one that asks the client: its calls go through the SDK's path.
 * Here rather than beside the asking itself (asks.ts), which loads the MCP SDK: the embedded runtime
 * prepares a catalog without it.
 */
function asksClient(syscalls: Readonly<Record<string, unknown>>): boolean {
  return ASK_SYSCALLS.some((name) => Object.hasOwn(syscalls, name));
}

/**
 * The two generations of MCP bermd serves list a tool's result differently: 2025-11-25 (and older)
 * allows only an object `outputSchema`, 2026-07-28 any JSON Schema.
 */
export type Generation = 'legacy' | 'modern';

export interface CatalogTool {
  /** The name MCP clients call it by. */
  name: string;
  harness: string;
  tool: string;
  /** As `tools/list` answers it to a 2025-era client: an `outputSchema` only when `returns` is an object schema. */
  listed: Tool;
  /** As `tools/list` answers it to a 2026-07-28 client: every schema `returns` is its `outputSchema`. */
  listedModern: Tool;
  /**
   * Present when `returns` is a schema: an ok value is checked against the schema clients are given
   * before it goes out as `structuredContent` (to every client when `structuredForLegacy`, else to
   * 2026-07-28 clients only).
   */
  checkOutput?: OutputCheck;
  /** `returns` is an object schema, which a 2025-era client takes as `outputSchema`. */
  structuredForLegacy: boolean;
  /** The tool's declared effect, when it is an external write: its calls go under receipts (receipts.ts). */
  write?: { retry: 'idempotency_key' | 'reconcile' | 'none'; reconcile?: string };
  /** Its harness declares a syscall asking the client (`berm.elicit`, `berm.sample`): its calls take the SDK's path. */
  asks?: true;
}

/** One harness as the catalog holds it, built by `prepare` and installed by `set`. */
export interface CatalogEntry {
  harness: string;
  tools: PreparedTool[];
  usage: string;
  /** The programs it may `berm.call` (its `deps.programs`). */
  programs: readonly string[];
  /** It is granted a syscall that leaves the machine (`berm.http.fetch`, `berm.http.proxy`). */
  leavesMachine: boolean;
  /** It declares a syscall asking the client (asks.ts). */
  asks?: boolean;
  /** Its prompts, resources and templates. */
  surface?: HarnessSurface;
}

/** What one harness shows a client: the tools listed under its names, whether it works in a closed world, its usage. */
interface Shown {
  tools: readonly PreparedTool[];
  open: boolean;
  usage: string;
  surface?: HarnessSurface;
}

/** The same thing shown: the same prepared tools (a deploy prepares new ones), the same world, the same usage. */
function sameShown(a: Shown, b: Shown): boolean {
  return (
    a.open === b.open &&
    a.usage === b.usage &&
    a.surface === b.surface &&
    a.tools.length === b.tools.length &&
    a.tools.every((t, i) => t === b.tools[i])
  );
}

/**
 * The items of `listed` whose harness (`harnesses`, in the same order) `caller` may call; all of them for
 * no caller (the daemon's own). Each harness is asked once.
 */
function visible<T>(listed: T[], harnesses: readonly string[], caller: Caller | undefined): T[] {
  if (caller === undefined || caller.mayCallEvery?.() === true) return listed;
  const asked = new Map<string, boolean>();
  return listed.filter((_, i) => {
    const harness = harnesses[i]!;
    let may = asked.get(harness);
    if (may === undefined) asked.set(harness, (may = caller.mayCall(harness)));
    return may;
  });
}

/** A tool as `prepare` builds it; its annotations depend on the rest of the deployed set, so `set` completes it. */
export interface PreparedTool {
  name: string;
  tool: string;
  spec: ToolSpec;
  inputSchema: Tool['inputSchema'];
  outputSchema?: { [keyword: string]: unknown };
  checkOutput?: OutputCheck;
}

export const USAGE_MIME_TYPE = 'text/markdown';

export function usageUri(harness: string): string {
  return `berm://${harness}/usage`;
}

/** The harness a `berm://{harness}/usage` URI names, or undefined when it is not one. */
export function harnessOfUsageUri(uri: string): string | undefined {
  const m = /^berm:\/\/([^/]+)\/usage$/.exec(uri);
  return m?.[1];
}

function isSchemaObject(schema: JsonSchema | undefined): schema is { [keyword: string]: unknown } {
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema);
}

/**
 * Schemas are 2020-12 by contract, so a root `$schema` says nothing a client needs, and clients whose
 * validator defaults to another draft fail to compile a schema that names 2020-12. It is left out.
 */
function withoutDialect(schema: { [keyword: string]: unknown }): { [keyword: string]: unknown } {
  if (!('$schema' in schema)) return schema;
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** MCP requires an `inputSchema` of `type: "object"`; arguments are object schemas by contract, but a manifest may leave `type` out or use `true`. */
function inputSchemaOf(args: JsonSchema): Tool['inputSchema'] {
  if (args === true) return { type: 'object' };
  if (args === false) return { type: 'object', not: {} };
  const schema = withoutDialect(standardSchema(args));
  if (schema.type === 'object') return schema as Tool['inputSchema'];
  if (schema.type === undefined) return { ...schema, type: 'object' };
  return { type: 'object', allOf: [schema] };
}

function describe(spec: ToolSpec): string {
  return spec.deprecated === true ? `Deprecated. ${spec.description}` : spec.description;
}

/**
 * What the manifest and the operator's grants say about a tool, as MCP's hints: a query changes
 * nothing (read-only, so calling it again changes nothing either); a tool whose harness can reach no
 * syscall that leaves the machine, itself or through the programs it calls, works in a closed world.
 * A declared effect adds what it promises: an external write is destructive (a retry may act twice),
 * and a call is idempotent when it writes nothing outside or a repeated idempotency key does nothing
 * new. A tool without one is hinted as before effects were declared.
 */
function annotationsOf(spec: ToolSpec, openWorld: boolean): ToolAnnotations {
  const annotations: ToolAnnotations = spec.query === true ? { readOnlyHint: true, idempotentHint: true } : { readOnlyHint: false };
  const effect = spec.effect;
  if (effect?.kind === 'external_write') {
    annotations.destructiveHint = true;
    annotations.idempotentHint = effect.retry === 'idempotency_key';
  } else if (effect?.kind === 'none') {
    annotations.idempotentHint = true;
  }
  annotations.openWorldHint = openWorld;
  return annotations;
}

/** A declared effect as `_meta` carries it, its tools named as they are served, so a client can call them. */
export interface EffectMeta {
  kind: 'none' | 'external_write';
  retry?: string;
  reconcile?: string;
  compensation?: string;
}

function effectMeta(spec: ToolSpec, served: (tool: string) => string): EffectMeta | undefined {
  const effect = spec.effect;
  if (effect === undefined) return undefined;
  if (effect.kind === 'none') return { kind: 'none' };
  const meta: EffectMeta = { kind: effect.kind, retry: effect.retry };
  if (effect.reconcile !== undefined) meta.reconcile = served(effect.reconcile);
  if (effect.compensation !== undefined) meta.compensation = served(effect.compensation);
  return meta;
}

/** The `_meta` key of a tool's declared effect (`EffectMeta`). */
export const EFFECT_META_KEY = 'berm/effect';

export class ToolCatalog {
  readonly separator: string;
  private readonly entries = new Map<string, CatalogEntry>();
  private byName = new Map<string, CatalogTool>();
  private listedTools: Tool[] = [];
  private listedModernTools: Tool[] = [];
  /** The harness of each listed tool, in the lists' order. */
  private toolHarnesses: string[] = [];
  private listedResources: Resource[] = [];
  private resourceHarnesses: string[] = [];
  /** What each harness showed at the last rebuild, to tell which ones a change touched. */
  private shown = new Map<string, Shown>();
  /** Harnesses whose listing changed since `takeChanged` was last asked. */
  private changed = new Set<string>();
  /**
   * Every harness declaring each name, listed or not: what `prepare` refuses a name by, kept up to date by
   * `set` and `delete` without a rebuild, so a restore installing a thousand harnesses rebuilds nothing.
   */
  private readonly holders = new Map<string, Array<{ harness: string; tool: string }>>();
  /** The order harnesses were first installed in, which decides who keeps a name two hold (see `rebuild`). */
  private readonly installed = new Map<string, number>();
  private nextInstalled = 0;
  /** The lists and `byName` are behind `entries`: rebuilt by the first read after a change. */
  private stale = false;
  /** Each listed tool's JSON, and the whole list's, per generation: made on first ask, forgotten at each rebuild. */
  private json: Partial<Record<Generation, { tools: string[]; all: Buffer }>> = {};

  constructor(separator: string) {
    this.separator = separator;
  }

  fullName(harness: string, tool: string): string {
    return `${harness}${this.separator}${tool}`;
  }

  /**
   * Everything about `harness` the catalog needs, built without changing the catalog. Throws
   * `BermdError` `tool-name-collision` when another deployed harness already answers to one of its
   * names, and `bad-schema` when a `returns` does not compile. `leavesMachine`: the harness is granted
   * a syscall that leaves the machine. `restored`: the harness was deployed before (a restore), so its
   * `returns` compiled then and are compiled again only when a result is first checked.
   */
  prepare(harness: string, manifest: ManifestData, leavesMachine = false, restored = false): CatalogEntry {
    const tools = manifest.tools.map((spec): PreparedTool => {
      const name = this.fullName(harness, spec.name);
      const holder = this.holders.get(name)?.find((h) => h.harness !== harness);
      if (holder !== undefined) {
        throw new BermdError(
          'tool-name-collision',
          `tool ${spec.name} of ${harness} would be listed as ${name}, which is already tool ${holder.tool} of ${holder.harness} (the tool separator is ${JSON.stringify(this.separator)})`,
          { tool: spec.name, listed_as: name, holder: { harness: holder.harness, tool: holder.tool } },
        );
      }
      const prepared: PreparedTool = { name, tool: spec.name, spec, inputSchema: inputSchemaOf(spec.arguments) };
      if (isSchemaObject(spec.returns)) {
        // Checked against what clients are given, so that no value bermd sends is one a client refuses.
        prepared.outputSchema = withoutDialect(standardSchema(spec.returns));
        prepared.checkOutput = compileOutputCheck(prepared.outputSchema, `the returns of tool "${spec.name}"`, restored);
      }
      return prepared;
    });
    return {
      harness,
      tools,
      usage: manifest.usage,
      programs: manifest.deps.programs,
      leavesMachine,
      asks: asksClient(manifest.deps.syscalls),
      surface: surfaceOf(manifest),
    };
  }

  /**
   * Installs (or replaces) a harness; answers its tools left out because a harness installed before it
   * holds their names (see `rebuild`), as `harness/tool`.
   */
  set(entry: CatalogEntry): string[] {
    const { harness } = entry;
    this.release(harness);
    this.entries.set(harness, entry);
    if (!this.installed.has(harness)) this.installed.set(harness, this.nextInstalled++);
    const order = this.installed.get(harness)!;
    const shadowed: string[] = [];
    for (const prepared of entry.tools) {
      let holding = this.holders.get(prepared.name);
      if (holding === undefined) this.holders.set(prepared.name, (holding = []));
      if (holding.some((h) => this.installed.get(h.harness)! < order)) shadowed.push(`${harness}/${prepared.tool}`);
      holding.push({ harness, tool: prepared.tool });
    }
    this.stale = true;
    return shadowed;
  }

  delete(harness: string): boolean {
    if (!this.entries.has(harness)) return false;
    // Released while its entry still says which names it holds.
    this.release(harness);
    this.entries.delete(harness);
    this.installed.delete(harness);
    this.stale = true;
    return true;
  }

  /** Forgets the names `harness`'s installed entry declares. */
  private release(harness: string): void {
    for (const prepared of this.entries.get(harness)?.tools ?? []) {
      const holding = this.holders.get(prepared.name)?.filter((h) => h.harness !== harness) ?? [];
      if (holding.length === 0) this.holders.delete(prepared.name);
      else this.holders.set(prepared.name, holding);
    }
  }

  /** Rebuilds the lists when the set changed since they were built. */
  private fresh(): void {
    if (!this.stale) return;
    this.stale = false;
    this.rebuild();
  }

  lookup(name: string): CatalogTool | undefined {
    this.fresh();
    return this.byName.get(name);
  }

  /**
   * The harnesses a tool name could belong to: each part of it before a separator that is a harness name.
   * With the default separator (`.`, which no harness name holds) that is at most one, the part before
   * the first; a separator a harness name may hold (`_`, `-`) can make it several.
   */
  harnessesNamedBy(name: string): string[] {
    const found: string[] = [];
    for (let at = name.indexOf(this.separator); at > 0; at = name.indexOf(this.separator, at + 1)) {
      const harness = name.slice(0, at);
      if (isHarnessName(harness)) found.push(harness);
    }
    return found;
  }

  /** The tools as `tools/list` answers them to a client of `generation`: those of the harnesses `caller` may call, or all. */
  tools(generation: Generation = 'legacy', caller?: Caller): Tool[] {
    this.fresh();
    return visible(generation === 'modern' ? this.listedModernTools : this.listedTools, this.toolHarnesses, caller);
  }

  /**
   * `tools(generation, caller)` as UTF-8 JSON, from what was serialised at the first ask since the set last
   * changed: a list of a thousand harnesses is a megabyte, and serialising and encoding it again on every
   * `tools/list` was most of what one costs. A caller who sees every harness gets the bytes kept.
   */
  toolsJson(generation: Generation = 'legacy', caller?: Caller): Buffer {
    this.fresh();
    let json = this.json[generation];
    if (json === undefined) {
      const tools = (generation === 'modern' ? this.listedModernTools : this.listedTools).map((t) => JSON.stringify(t));
      json = { tools, all: Buffer.from(`[${tools.join(',')}]`) };
      this.json[generation] = json;
    }
    const shown = visible(json.tools, this.toolHarnesses, caller);
    return shown.length === json.tools.length ? json.all : Buffer.from(`[${shown.join(',')}]`);
  }

  /** The usage resources of the harnesses `caller` may call, or all. */
  resources(caller?: Caller): Resource[] {
    this.fresh();
    return visible(this.listedResources, this.resourceHarnesses, caller);
  }

  /**
   * The harnesses whose listing (tools, annotations, usage) changed since the last time this was asked,
   * forgotten once answered: a deploy changes its own harness's, and may change the open-world hint of
   * the harnesses that call it, or let a tool another harness held be listed.
   */
  takeChanged(): Set<string> {
    this.fresh();
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  /** `harness`'s prompts, resources and templates, when it is deployed. */
  surface(harness: string): HarnessSurface | undefined {
    const entry = this.entries.get(harness);
    return entry === undefined ? undefined : (entry.surface ?? NO_SURFACE);
  }

  /** The deployed harnesses `caller` may call (all for none), by name. */
  harnessesFor(caller?: Caller): string[] {
    return [...this.entries.keys()].filter((h) => caller === undefined || caller.mayCall(h)).sort();
  }

  /** The usage text of `harness`, when it is deployed and has one. */
  usage(harness: string): string | undefined {
    const usage = this.entries.get(harness)?.usage;
    return usage === undefined || usage === '' ? undefined : usage;
  }

  /**
   * The harnesses whose calls may leave the machine: granted such a syscall, or declaring a program
   * (deployed now) that may. A deploy or an undeploy rebuilds the list, and clients are told it changed.
   */
  private openWorld(): Set<string> {
    const open = new Set<string>();
    const reaches = (harness: string, seen: Set<string>): boolean => {
      if (open.has(harness)) return true;
      const entry = this.entries.get(harness);
      if (entry === undefined || seen.has(harness)) return false;
      seen.add(harness);
      return entry.leavesMachine || entry.programs.some((program) => reaches(program, seen));
    };
    for (const harness of this.entries.keys()) if (reaches(harness, new Set())) open.add(harness);
    return open;
  }

  /**
   * `prepare` refuses a name another harness holds, but two deploys of different names run
   * concurrently, so both can pass it. Should that happen, the harness installed first keeps the
   * name and the other's tool is left out of the list (`set` reports it to the caller to log).
   */
  private rebuild(): void {
    const open = this.openWorld();
    const byName = new Map<string, CatalogTool>();
    const resources: Array<{ harness: string; resource: Resource }> = [];
    const shown = new Map<string, Shown>();
    for (const entry of this.entries.values()) {
      const listed: PreparedTool[] = [];
      for (const prepared of entry.tools) {
        if (byName.has(prepared.name)) continue;
        byName.set(
          prepared.name,
          catalogTool(entry.harness, prepared, open.has(entry.harness), (tool) => this.fullName(entry.harness, tool), entry.asks === true),
        );
        listed.push(prepared);
      }
      shown.set(entry.harness, { tools: listed, open: open.has(entry.harness), usage: entry.usage, surface: entry.surface });
      if (entry.usage !== '') {
        resources.push({
          harness: entry.harness,
          resource: {
            uri: usageUri(entry.harness),
            name: `${entry.harness} usage`,
            description: `How to use the tools of ${entry.harness}: read it before choosing among them.`,
            mimeType: USAGE_MIME_TYPE,
          },
        });
      }
    }
    for (const [harness, now] of shown) {
      const before = this.shown.get(harness);
      if (before === undefined || !sameShown(before, now)) this.changed.add(harness);
    }
    for (const harness of this.shown.keys()) if (!shown.has(harness)) this.changed.add(harness);
    this.shown = shown;
    this.byName = byName;
    const sorted = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.listedTools = sorted.map((t) => t.listed);
    this.listedModernTools = sorted.map((t) => t.listedModern);
    this.toolHarnesses = sorted.map((t) => t.harness);
    resources.sort((a, b) => (a.resource.uri < b.resource.uri ? -1 : 1));
    this.listedResources = resources.map((r) => r.resource);
    this.resourceHarnesses = resources.map((r) => r.harness);
    this.json = {};
  }
}

function catalogTool(
  harness: string,
  prepared: PreparedTool,
  openWorld: boolean,
  served: (tool: string) => string,
  asks: boolean,
): CatalogTool {
  const { name, tool, spec, inputSchema, outputSchema, checkOutput } = prepared;
  // Which harness and tool the name stands for, so a client need not know the separator to find a tool.
  const meta: Record<string, unknown> = { 'berm/harness': harness, 'berm/tool': tool };
  const effect = effectMeta(spec, served);
  if (effect !== undefined) meta[EFFECT_META_KEY] = effect;
  const listed: Tool = {
    name,
    description: describe(spec),
    inputSchema,
    annotations: annotationsOf(spec, openWorld),
    _meta: meta,
  };
  const listedModern: Tool = outputSchema === undefined ? listed : { ...listed, outputSchema: outputSchema as Tool['outputSchema'] };
  const structuredForLegacy = outputSchema?.type === 'object';
  const out: CatalogTool = {
    name,
    harness,
    tool,
    listed: structuredForLegacy ? listedModern : listed,
    listedModern,
    checkOutput,
    structuredForLegacy,
  };
  if (spec.effect?.kind === 'external_write') out.write = { retry: spec.effect.retry, reconcile: spec.effect.reconcile };
  if (asks) out.asks = true;
  return out;
}
