/**
 * The guest ABI's names (spec §4): the host calls every host serves, and the syscalls beyond them that
 * bermd knows. A host call's name is `module.field` of its wasm import (`"berm" "call"` is `berm.call`).
 */
export const HOST_CALL = {
  call: 'berm.call',
  log: 'berm.log',
  emit: 'berm.emit',
  /** The call's idempotency key (an `external_write` call's, or one a chain derived for a nested call); null without one. */
  idempotencyKey: 'berm.idempotency_key',
  /** How far the call has come: a `notifications/progress` to the client that asked for it. */
  progress: 'berm.progress',
} as const;

/** The ABI's own host calls: every host serves them, and no image declares them. */
export const ABI_HOST_CALLS: ReadonlySet<string> = new Set(Object.values(HOST_CALL));

export const SYSCALL = {
  /** An HTTP request sent directly, to a host the image declares under it. */
  httpFetch: 'berm.http.fetch',
  /** An HTTP request sent through the operator's proxy. */
  httpProxy: 'berm.http.proxy',
  /** A question to the user of the client that made the call (MCP's `elicitation/create`). */
  elicit: 'berm.elicit',
  /** A message from the model of the client that made the call (MCP's `sampling/createMessage`). */
  sample: 'berm.sample',
  /** One of the program's own resources changed: its subscribed clients are told. */
  resourceUpdated: 'berm.resource_updated',
} as const;

/**
 * The syscalls that ask the client making the call: served by every bermd by default (they reach only
 * that client), declared in `deps.syscalls` with no strings, and narrowed per harness by `--grant`.
 */
export const ASK_SYSCALLS: readonly string[] = [SYSCALL.elicit, SYSCALL.sample];

/**
 * Syscalls every bermd serves without `--serve`, to an image that declares them: they reach nothing
 * beyond the harness's own MCP clients. `berm.resource_updated` `{"path"}` tells the sessions
 * subscribed to one of its resources that it changed.
 */
export const RESOURCE_UPDATED = SYSCALL.resourceUpdated;
export const DEFAULT_SYSCALLS: ReadonlySet<string> = new Set([RESOURCE_UPDATED]);

/** The exports a harness's prompts, resources and completion run through (optional, per what the manifest declares). */
export const PROMPT_EXPORT_PREFIX = 'berm_prompt_';
export const RESOURCE_READ_EXPORT = 'berm_resource_read';
export const COMPLETE_EXPORT = 'berm_complete';

export function promptExport(prompt: string): string {
  return `${PROMPT_EXPORT_PREFIX}${prompt}`;
}

/** The syscalls whose declared strings (`deps.syscalls`) and grants are host patterns. */
export const HTTP_SYSCALLS: readonly string[] = [SYSCALL.httpFetch, SYSCALL.httpProxy];

/** The exports the ABI names: the allocator, and one per tool. */
export const ALLOC_EXPORT = 'berm_alloc';
export const TOOL_EXPORT_PREFIX = 'berm_tool_';

export function toolExport(tool: string): string {
  return `${TOOL_EXPORT_PREFIX}${tool}`;
}
