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
}

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
}

/** The ABI version this reader understands. */
export const ABI_VERSION = 1;
