/**
 * The deployed tool set as MCP lists it (spec §6): every tool of every harness under
 * `{harness}{separator}{tool}`, and each harness's usage as the resource `berm://{harness}/usage`.
 *
 * Dispatch never splits a name: it looks the whole name up in a map built from the deployed set, so a
 * separator that may occur inside a harness name (`_`, `-`) stays unambiguous. What keeps the map a
 * function is refusing, at deploy, a harness one of whose names another harness already answers to.
 */
import type { JsonSchema, ManifestData, ToolSpec } from '@berm/manifest';
import type { Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { BermdError } from '../errors.js';
import { compileOutputCheck, type OutputCheck } from './output-check.js';

export interface CatalogTool {
  /** The name MCP clients call it by. */
  name: string;
  harness: string;
  tool: string;
  /** As `tools/list` answers it. */
  listed: Tool;
  /** Present when the tool is listed with an `outputSchema`: ok values are checked before they go out as `structuredContent`. */
  checkOutput?: OutputCheck;
}

/** One harness as the catalog holds it, built by `prepare` and installed by `set`. */
export interface CatalogEntry {
  harness: string;
  tools: CatalogTool[];
  usage: string;
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

/** `outputSchema` must be an object schema (MCP requires `type: "object"`); any other `returns` is not listed as one. */
function isObjectSchema(schema: JsonSchema | undefined): schema is { [keyword: string]: unknown } {
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema) && schema.type === 'object';
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
  const schema = withoutDialect(args);
  if (schema.type === 'object') return schema as Tool['inputSchema'];
  if (schema.type === undefined) return { ...schema, type: 'object' };
  return { type: 'object', allOf: [schema] };
}

function describe(spec: ToolSpec): string {
  return spec.deprecated === true ? `Deprecated. ${spec.description}` : spec.description;
}

export class ToolCatalog {
  readonly separator: string;
  private readonly entries = new Map<string, CatalogEntry>();
  private byName = new Map<string, CatalogTool>();
  private listedTools: Tool[] = [];
  private listedResources: Resource[] = [];

  constructor(separator: string) {
    this.separator = separator;
  }

  fullName(harness: string, tool: string): string {
    return `${harness}${this.separator}${tool}`;
  }

  /**
   * Everything about `harness` the catalog needs, built without changing the catalog. Throws
   * `BermdError` `tool-name-collision` when another deployed harness already answers to one of its
   * names, and `bad-schema` when a `returns` listed as an output schema does not compile.
   */
  prepare(harness: string, manifest: ManifestData): CatalogEntry {
    const tools = manifest.tools.map((spec): CatalogTool => {
      const name = this.fullName(harness, spec.name);
      const holder = this.byName.get(name);
      if (holder !== undefined && holder.harness !== harness) {
        throw new BermdError(
          'tool-name-collision',
          `tool ${spec.name} of ${harness} would be listed as ${name}, which is already tool ${holder.tool} of ${holder.harness} (the tool separator is ${JSON.stringify(this.separator)})`,
          { tool: spec.name, listed_as: name, holder: { harness: holder.harness, tool: holder.tool } },
        );
      }
      const listed: Tool = {
        name,
        description: describe(spec),
        inputSchema: inputSchemaOf(spec.arguments),
        annotations: { readOnlyHint: spec.query === true },
        // Which harness and tool the name stands for, so a client need not know the separator to find a tool.
        _meta: { 'berm/harness': harness, 'berm/tool': spec.name },
      };
      let checkOutput: OutputCheck | undefined;
      if (isObjectSchema(spec.returns)) {
        const outputSchema = withoutDialect(spec.returns);
        listed.outputSchema = outputSchema as Tool['outputSchema'];
        checkOutput = compileOutputCheck(outputSchema, `the returns of tool "${spec.name}"`);
      }
      return { name, harness, tool: spec.name, listed, checkOutput };
    });
    return { harness, tools, usage: manifest.usage };
  }

  /** Installs (or replaces) a harness; answers the names left out because another harness holds them (see `rebuild`). */
  set(entry: CatalogEntry): string[] {
    this.entries.set(entry.harness, entry);
    return this.rebuild();
  }

  delete(harness: string): boolean {
    const had = this.entries.delete(harness);
    if (had) this.rebuild();
    return had;
  }

  lookup(name: string): CatalogTool | undefined {
    return this.byName.get(name);
  }

  tools(): Tool[] {
    return this.listedTools;
  }

  resources(): Resource[] {
    return this.listedResources;
  }

  /** The usage text of `harness`, when it is deployed and has one. */
  usage(harness: string): string | undefined {
    const usage = this.entries.get(harness)?.usage;
    return usage === undefined || usage === '' ? undefined : usage;
  }

  /**
   * `prepare` refuses a name another harness holds, but two deploys of different names run
   * concurrently, so both can pass it. Should that happen, the harness installed first keeps the
   * name and the other's tool is left out of the list (and reported to the caller to log).
   */
  private rebuild(): string[] {
    const byName = new Map<string, CatalogTool>();
    const shadowed: string[] = [];
    const resources: Resource[] = [];
    for (const entry of this.entries.values()) {
      for (const tool of entry.tools) {
        if (byName.has(tool.name)) shadowed.push(`${tool.harness}/${tool.tool}`);
        else byName.set(tool.name, tool);
      }
      if (entry.usage !== '') {
        resources.push({
          uri: usageUri(entry.harness),
          name: `${entry.harness} usage`,
          description: `How to use the tools of ${entry.harness}: read it before choosing among them.`,
          mimeType: USAGE_MIME_TYPE,
        });
      }
    }
    this.byName = byName;
    this.listedTools = [...byName.values()].map((t) => t.listed).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.listedResources = resources.sort((a, b) => (a.uri < b.uri ? -1 : 1));
    return shadowed;
  }
}
