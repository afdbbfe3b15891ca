/**
 * One tool call's answer as `crab run` (bermd's runtime in the command line) and `berm call` (a bermd's
 * `/mcp`) both print it with `--json`, and as the testing helper answers it: what the tool answered, and
 * what it reported on the way. A call the host refused or stopped is not such an answer: it is an error
 * with one of the codes below, printed as the command line prints any failure.
 */

/** Every code a call's failure carries: in `/mcp`'s tool results as `_meta["berm/error"].code`, and in the runtime's answers. */
export const CALL_ERROR_CODES = [
  'unknown-harness',
  'unknown-tool',
  'insufficient-scope',
  'invalid-arguments',
  'guest-error',
  'trap',
  'timeout',
  'busy',
  'cancelled',
  'memory-limit',
  'result-too-large',
  'bad-result',
  'bad-content',
  'bad-module',
  'closed',
  'internal',
  // An external_write's receipts (docs/contract.md §6): nothing ran.
  'bad-idempotency-key',
  'idempotency-key-reused',
  'in-progress',
  'outcome-unknown',
  'result-not-kept',
  'store-unavailable',
] as const;

export type CallErrorCode = (typeof CALL_ERROR_CODES)[number];

/**
 * The failures that are the tool's own answer: it threw (`guest-error`), it trapped, or what it answered
 * is not a result (`bad-result`: not an envelope, or not what its `returns` schema allows). Every other
 * code is the host's refusal: the call never ran (a name, the arguments, a scope, a full line) or was
 * stopped at a limit.
 */
export const TOOL_ERROR_CODES: readonly CallErrorCode[] = ['guest-error', 'trap', 'bad-result', 'bad-content'];

/** Whether a call that failed with `code` is a refusal rather than the tool's own error answer. */
export function isCallRefusal(code: string): boolean {
  return !(TOOL_ERROR_CODES as readonly string[]).includes(code);
}

/** An event a call's chain emitted, accepted by the host. */
export interface ToolEvent {
  /** The harness whose instance emitted it (another than the called one when a `berm.call` ran it) and its tool. */
  harness: string;
  tool: string;
  event: string;
  fields: unknown;
}

/** A `berm.log` line a call's chain wrote. */
export interface ToolLog {
  harness: string;
  tool: string;
  level: string;
  message: string;
}

/** MCP's content items as a tool result carries them. */
export type ToolContent = { type: string; [member: string]: unknown };

/** The `_meta` key a client sends an external write's idempotency key in, and bermd's answer names the key by. */
export const IDEMPOTENCY_KEY_META = 'io.berm/idempotency-key';
/** The `_meta` key marking an answer bermd gave from a receipt, the tool not run again. */
export const REPLAYED_META = 'io.berm/replayed';

/** What `--json` prints for a call the tool answered (an error answer included). */
export interface ToolAnswerDocument {
  /** The structured result (MCP's `structuredContent`), or null when the answer has none. */
  result: unknown;
  content: ToolContent[];
  is_error: boolean;
  events: ToolEvent[];
  logs: ToolLog[];
  /** The idempotency key bermd's answer names: a call of an `external_write` tool through `/mcp` only. */
  idempotency_key?: string;
  /** True when bermd answered from the key's receipt, the tool not run again. */
  replayed?: boolean;
}
