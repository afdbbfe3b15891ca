/** A JSON Schema (2020-12), including the boolean schemas `true` and `false`. */
export type JsonSchema = boolean | { [keyword: string]: unknown };

export interface ToolSpec {
  name: string;
  description: string;
  /** An object schema without a title. */
  arguments: JsonSchema;
  returns?: JsonSchema;
  query?: boolean;
  deprecated?: boolean;
  /** What calling the tool does outside the program, and how a retried call is kept from doing it twice. */
  effect?: Effect;
  /** The kinds of content block the tool may return beside its value (content.ts). */
  content?: ContentKind[];
}

/** A kind of MCP content block a tool may return: MCP's `type` of the block. */
export type ContentKind = 'text' | 'image' | 'audio' | 'resource_link' | 'resource';

export const CONTENT_KINDS: readonly ContentKind[] = ['text', 'image', 'audio', 'resource_link', 'resource'];

/**
 * How a tool that writes outside keeps a retried call from writing twice:
 * - `idempotency_key`: the tool takes a key and a second call with the same key does nothing new;
 * - `reconcile`: a query (`Effect.reconcile`) tells whether a write happened before it is retried;
 * - `none`: nothing; a retried call may write again.
 */
export type EffectRetry = 'idempotency_key' | 'reconcile' | 'none';

export const EFFECT_RETRIES: readonly EffectRetry[] = ['idempotency_key', 'reconcile', 'none'];

/** A tool's effect contract: it writes nothing outside, or it writes and says how retries are made safe. */
export type Effect =
  | { kind: 'none' }
  | {
      kind: 'external_write';
      retry: EffectRetry;
      /** A query tool of the same program, taking the same arguments, that tells whether the write happened. */
      reconcile?: string;
      /** The tool that undoes the write; declared for callers, never run by the host. */
      compensation?: string;
    };

export interface EventSpec {
  name: string;
  description: string;
  /** The schema of the event's fields (an object schema). */
  fields: JsonSchema;
  deprecated?: boolean;
}

export interface Deps {
  programs: string[];
  /** Syscall name (dotted, e.g. `berm.http.fetch`) to what the program reaches through it. */
  syscalls: Record<string, string[]>;
  secrets: string[];
}

/** The merged manifest: the program record with every event record folded into `events`. */
export interface ManifestData {
  abi_version: number;
  version: string;
  description: string;
  homepage: string;
  repository: string;
  readme: string;
  usage: string;
  tools: ToolSpec[];
  events: EventSpec[];
  deps: Deps;
  /** Prompt templates the program renders (`berm_prompt_{name}`); absent: none. */
  prompts?: PromptSpec[];
  /** Resources at fixed paths, read through `berm_resource_read`; absent: none. */
  resources?: ResourceSpec[];
  /** Resources at paths matching an RFC 6570 level-1 template, read through `berm_resource_read`; absent: none. */
  resource_templates?: ResourceTemplateSpec[];
}

export interface PromptArgumentSpec {
  name: string;
  description: string;
  required?: boolean;
  /** Whether `berm_complete` suggests values for it. */
  complete?: boolean;
}

export interface PromptSpec {
  name: string;
  description: string;
  arguments: PromptArgumentSpec[];
}

export interface ResourceSpec {
  /** Relative to the harness: served at `berm://{harness}/{path}`. */
  path: string;
  name: string;
  description: string;
  mimeType?: string;
}

export interface ResourceTemplateSpec {
  /** An RFC 6570 level-1 template relative to the harness: `template/{id}/data`. */
  path: string;
  name: string;
  description: string;
  mimeType?: string;
  /** The template's variables `berm_complete` suggests values for. */
  complete?: string[];
}

/** The ABI version this reader understands. */
export const ABI_VERSION = 1;
